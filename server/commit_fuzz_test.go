package server_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzCommitUpdates sends arbitrary CommitTableRequest bodies through the
// real router to a fresh v2 table with one snapshot (id 1, sequence number
// 1). Every answer is a 200 or an Iceberg error other than a 5xx, and
// afterwards the table still loads and takes a property change and an
// append: no body, however hostile, bricks a table. The committed corpus
// (testdata/fuzz/FuzzCommitUpdates) holds hostile cases: huge and negative
// numbers, nested nulls, wrong types, metadata-breaking updates. NOW_MS in
// a body stands for the current time in milliseconds, so that seeds can
// date snapshots as a live client would.
func FuzzCommitUpdates(f *testing.F) {
	for _, seed := range []string{
		`{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`,
		`{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":1}],"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":2,"parent-snapshot-id":1,"sequence-number":2,"timestamp-ms":NOW_MS,"manifest-list":"file:///nowhere/m.avro","summary":{"operation":"append"}}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":2}]}`,
		`{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":5,"sequence-number":9,"timestamp-ms":NOW_MS,"manifest-list":"m","summary":{"operation":"append"}}},{"action":"add-snapshot","snapshot":{"snapshot-id":6,"sequence-number":3,"timestamp-ms":NOW_MS,"manifest-list":"m","summary":{"operation":"append"}}}]}`,
		`{"updates":[{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":-3,"name":"x","type":"long","required":false}]}}]}`,
		`{"updates":[{"action":"set-current-schema","schema-id":999}]}`,
		`{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":1e400,"timestamp-ms":-9223372036854775808}}]}`,
		`{"requirements":null,"updates":[null,{"action":null},{"action":"set-properties","updates":{"a":null}}]}`,
		`{"requirements":"x","updates":{"action":"set-properties"}}`,
	} {
		f.Add([]byte(seed))
	}
	b := setupTB(f, "sqlite", map[string]string{"allowed-locations": "file:///nowhere"})
	b.createNamespaceTB(f, "ns")
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, body []byte) {
		if redirectsWrites(body) {
			return
		}
		name := "f" + strconv.FormatInt(n.Add(1), 10)
		path := "/v1/wh/namespaces/ns/tables/" + name
		require.Equal(t, 200, b.createTable(t, "ns", name, nil).status)
		r := b.do(t, "POST", path, commitBody(addSnapshot(1, nil, 1, time.Now(), nil), setMainRef(1)))
		require.Equal(t, 200, r.status, "%s", r.body)

		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		r = b.do(t, "POST", path, strings.ReplaceAll(string(body), "NOW_MS", now))
		if r.status != 200 {
			r.errorOf(t) // an Iceberg error body whose code is the status
			require.Less(t, r.status, 500, "%s", r.body)
		}
		requireTableHealthy(t, b, name)
	})
}

// redirectsWrites reports whether a body could move where the catalog
// writes files (a location or write.metadata.path): the catalog accepts any
// absolute file:// path there, and a fuzzer must not write outside its
// temporary directories. Keys are compared as the JSON decoder matches them
// (after unescaping, case-insensitively).
func redirectsWrites(body []byte) bool {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return false // not JSON: refused before anything is written
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				loc, isString := e.(string)
				if strings.EqualFold(k, "location") && isString && strings.Contains(loc, ":") {
					return true // a URL; empty and relative locations are refused
				}
				if strings.Contains(strings.ToLower(k), "write.metadata.path") || walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(doc)
}
