package changeevents

import (
	"encoding/json"
)

// ForeignIdent is an identifier field of an event's operation that names
// an object other than the event's own (whose visibility decides whether
// the event is shown at all): the source of a rename.
type ForeignIdent struct {
	// Field is the operation's key holding the identifier.
	Field     string
	Namespace []string
	Name      string
}

// ForeignIdents lists the identifier fields of an operation body (of type
// op) that name another object than the event's own. Every other field
// names the event's own object, or holds no identifier. A body that does
// not decode lists nothing; Redact then drops the field anyway.
func ForeignIdents(op string, body json.RawMessage) []ForeignIdent {
	if op != RenameTable && op != RenameView {
		return nil
	}
	var b struct {
		Source *identifier `json:"source"`
	}
	if json.Unmarshal(body, &b) != nil || b.Source == nil {
		return []ForeignIdent{{Field: "source"}}
	}
	return []ForeignIdent{{Field: "source", Namespace: b.Source.Namespace, Name: b.Source.Name}}
}

// RedactedField lists, in a redacted operation, the fields whose
// identifiers were withheld from the reader.
const RedactedField = "x-lakehold.redacted"

// Redact returns body with each of fields replaced by the empty
// identifier {"namespace": [], "name": ""}, which no object can have, and
// listed under RedactedField: the shape stays the proposal's (source is
// required) while naming nothing. A body that does not decode becomes
// {"operation-type": op} with the fields listed.
func Redact(op string, body json.RawMessage, fields []string) json.RawMessage {
	if len(fields) == 0 {
		return body
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
		opJSON, _ := json.Marshal(op) // a string cannot fail
		m["operation-type"] = opJSON
	}
	empty, _ := json.Marshal(identifier{Namespace: []string{}}) // cannot fail
	for _, f := range fields {
		m[f] = empty
	}
	list, _ := json.Marshal(fields) // cannot fail
	m[RedactedField] = list
	out, err := json.Marshal(m)
	if err != nil { // raw values that decoded re-encode
		return json.RawMessage(`{}`)
	}
	return out
}
