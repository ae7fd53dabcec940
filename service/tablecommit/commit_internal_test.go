package tablecommit

import (
	"encoding/json"
	"testing"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/ident"
)

// FuzzParseChange: arbitrary commit bodies decode to a change or to a 400,
// never panic, and accepted requirements are all of known types.
func FuzzParseChange(f *testing.F) {
	seeds := []string{
		`{"requirements":[],"updates":[]}`,
		`{"requirements":[{"type":"assert-create"}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`,
		`{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[{"action":"remove-properties","removals":["a"]}]}`,
		`{"requirements":[{"type":"assert-current-schema-id","current-schema-id":1}],"updates":[{"action":"add-schema","schema":{"type":"struct","fields":[]}}]}`,
		`{"requirements":[{"type":"nope"}],"updates":[{"action":"nope"}]}`,
		`{"requirements":{},"updates":7}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	known := map[string]bool{
		"assert-create": true, "assert-table-uuid": true, "assert-ref-snapshot-id": true,
		"assert-last-assigned-field-id": true, "assert-current-schema-id": true,
		"assert-last-assigned-partition-id": true, "assert-default-spec-id": true, "assert-default-sort-order-id": true,
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req struct {
			Requirements json.RawMessage `json:"requirements"`
			Updates      json.RawMessage `json:"updates"`
		}
		if json.Unmarshal(body, &req) != nil {
			return
		}
		c, err := Parse(TableChange{Ident: ident.Ident{Namespace: []string{"ns"}, Name: "t"}, Requirements: req.Requirements, Updates: req.Updates})
		if err != nil {
			if k := fault.KindOf(err); k != fault.BadRequest {
				t.Fatalf("decode error of kind %v, want BadRequest: %v", k, err)
			}
			return
		}
		for _, r := range c.Reqs {
			if !known[r.Type] {
				t.Fatalf("accepted unknown requirement %q", r.Type)
			}
		}
	})
}
