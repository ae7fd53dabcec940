package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Hostile commits that iceberg-go's metadata builder lets through but that
// would leave a table whose metadata no longer loads or no longer takes
// commits. Each must be a 400 that commits nothing; the table must still
// load and take later commits.

func addSnapshot(id int64, parent *int64, seq int64, ts time.Time, schemaID *int) map[string]any {
	s := map[string]any{"snapshot-id": id, "sequence-number": seq, "timestamp-ms": ts.UnixMilli(),
		"manifest-list": "file:///nowhere/snap.avro", "summary": map[string]any{"operation": "append"}}
	if parent != nil {
		s["parent-snapshot-id"] = *parent
	}
	if schemaID != nil {
		s["schema-id"] = *schemaID
	}
	return map[string]any{"action": "add-snapshot", "snapshot": s}
}

func setMainRef(id int64) map[string]any {
	return map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}
}

// metaSetup is setup with file:///nowhere as an allowed location of the
// warehouse: the snapshots these tests add name manifest lists there (the
// location policy is tested elsewhere; here only the metadata rules speak).
func metaSetup(t *testing.T, backend string) *bundle {
	return setupTB(t, backend, map[string]string{"allowed-locations": "file:///nowhere"})
}

func commitBody(updates ...any) map[string]any {
	return map[string]any{"requirements": []any{}, "updates": updates}
}

// loadState is what a hostile commit must leave unchanged.
type loadState struct {
	metadataLocation string
	formatVersion    int
	lastSeq          int64
	nextRowID        int64
	current          *int64
}

func loadTableState(t *testing.T, b *bundle, name string) loadState {
	t.Helper()
	r := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/"+name, nil)
	require.Equal(t, 200, r.status, "table must still load: %s", r.body)
	var res struct {
		MetadataLocation string `json:"metadata-location"`
		Metadata         struct {
			FormatVersion int    `json:"format-version"`
			LastSeq       int64  `json:"last-sequence-number"`
			NextRowID     int64  `json:"next-row-id"`
			Current       *int64 `json:"current-snapshot-id"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	cur := res.Metadata.Current
	if cur != nil && *cur == -1 {
		cur = nil
	}
	m := res.Metadata
	return loadState{metadataLocation: res.MetadataLocation, formatVersion: m.FormatVersion, lastSeq: m.LastSeq, nextRowID: m.NextRowID, current: cur}
}

func errorReason(t *testing.T, r response) string {
	t.Helper()
	var e struct {
		Error struct {
			Reason string `json:"reason"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e))
	return e.Error.Reason
}

// requireHealthy: the table loads, takes a property change and a correct
// append (v4 tables append through their own routes), and loads again.
func requireTableHealthy(t *testing.T, b *bundle, name string) {
	t.Helper()
	path := "/v1/wh/namespaces/ns/tables/" + name
	r := b.do(t, "POST", path, setProps("after", "ok"))
	require.Equal(t, 200, r.status, "a later commit must work: %s", r.body)
	st := loadTableState(t, b, name)
	if st.formatVersion >= 4 {
		return
	}
	id := time.Now().UnixNano() & 0xffffffff
	seq := st.lastSeq + 1
	if st.formatVersion == 1 {
		seq = 0 // v1 snapshots have no sequence number
	}
	snap := addSnapshot(id, st.current, seq, time.Now(), nil)
	if st.formatVersion == 3 {
		s := snap["snapshot"].(map[string]any)
		s["first-row-id"], s["added-rows"] = st.nextRowID, 0
	}
	r = b.do(t, "POST", path, commitBody(snap, setMainRef(id)))
	require.Equal(t, 200, r.status, "a later append must work: %s", r.body)
	require.Equal(t, seq, loadTableState(t, b, name).lastSeq)
}

func TestHostileMetadataCommits(t *testing.T) {
	now := time.Now()
	missing, self := int64(4242), int64(12)
	zero, unknownSchema := 0, 77
	cases := []struct {
		name    string
		updates []any
		types   []string // acceptable error types
		reason  string   // "" when iceberg-go's builder already refuses it
	}{
		{"parentless snapshots with decreasing sequence numbers",
			[]any{addSnapshot(12, nil, 5, now, nil), addSnapshot(13, nil, 3, now, nil)},
			[]string{"ValidationException"}, "snapshot-sequence-not-increasing"},
		{"snapshot dated far in the future",
			[]any{addSnapshot(12, nil, 1, now.Add(100*24*time.Hour), nil), setMainRef(12)},
			[]string{"ValidationException"}, "timestamp-in-future"},
		{"current schema that does not exist",
			[]any{map[string]any{"action": "set-current-schema", "schema-id": 999}},
			[]string{"IllegalArgumentException", "ValidationException"}, ""},
		{"snapshot with a parent that does not exist",
			[]any{addSnapshot(12, &missing, 1, now, nil)},
			[]string{"ValidationException"}, "unknown-parent-snapshot"},
		{"snapshot that is its own parent",
			[]any{addSnapshot(12, &self, 1, now, nil)},
			[]string{"ValidationException"}, "unknown-parent-snapshot"},
		{"snapshot with a schema that does not exist",
			[]any{addSnapshot(12, nil, 1, now, &unknownSchema)},
			[]string{"ValidationException"}, "unknown-schema-id"},
		{"negative snapshot id",
			[]any{addSnapshot(-7, nil, 1, now, &zero), setMainRef(-7)},
			[]string{"ValidationException"}, "invalid-snapshot-id"},
		{"schema with a negative field id",
			[]any{map[string]any{"action": "add-schema", "schema": rawJSON(`{"type":"struct","schema-id":1,"fields":[
				{"id":3,"name":"id","type":"long","required":true},{"id":-3,"name":"x","type":"long","required":false}]}`)}},
			[]string{"ValidationException"}, "invalid-field-id"},
		{"schema with a field id reserved for metadata columns",
			[]any{map[string]any{"action": "add-schema", "schema": rawJSON(`{"type":"struct","schema-id":1,"fields":[
				{"id":3,"name":"id","type":"long","required":true},{"id":2147483600,"name":"x","type":"long","required":false}]}`)}},
			[]string{"ValidationException"}, "invalid-field-id"},
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := metaSetup(t, backend)
			b.createNamespace(t, "ns")
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					name := "t" + time.Now().Format("150405.000000000")[7:]
					require.Equal(t, 200, b.createTable(t, "ns", name, nil).status)
					before := loadTableState(t, b, name)
					r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/"+name, commitBody(tc.updates...))
					require.Equal(t, 400, r.status, "%s", r.body)
					typ, msg := r.errorOf(t)
					require.Contains(t, tc.types, typ, "%s", r.body)
					require.NotEmpty(t, msg)
					if tc.reason != "" && typ == "ValidationException" {
						require.Equal(t, tc.reason, errorReason(t, r), "%s", r.body)
					}
					require.Equal(t, before, loadTableState(t, b, name), "a rejected commit must change nothing")
					requireTableHealthy(t, b, name)
				})
			}
		})
	}
}

// TestHostileMetadataCreate: a create-by-commit (assert-create) whose
// metadata breaks the rules creates nothing.
func TestHostileMetadataCreate(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := metaSetup(t, backend)
			b.createNamespace(t, "ns")
			schema := map[string]any{"action": "add-schema", "schema": rawJSON(testSchema)}
			base := []any{
				map[string]any{"action": "assign-uuid", "uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
				map[string]any{"action": "upgrade-format-version", "format-version": 2},
				schema, map[string]any{"action": "set-current-schema", "schema-id": -1},
				map[string]any{"action": "add-spec", "spec": map[string]any{"spec-id": 0, "fields": []any{}}},
				map[string]any{"action": "set-default-spec", "spec-id": -1},
				map[string]any{"action": "add-sort-order", "sort-order": map[string]any{"order-id": 0, "fields": []any{}}},
				map[string]any{"action": "set-default-sort-order", "sort-order-id": -1},
			}
			create := func(name string, extra ...any) response {
				return b.do(t, "POST", "/v1/wh/namespaces/ns/tables/"+name, map[string]any{
					"requirements": []any{map[string]any{"type": "assert-create"}},
					"updates":      append(append([]any{}, base...), extra...),
				})
			}
			r := create("future", addSnapshot(1, nil, 1, time.Now().Add(48*time.Hour), nil), setMainRef(1))
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Equal(t, "timestamp-in-future", errorReason(t, r))
			r = create("decreasing", addSnapshot(1, nil, 5, time.Now(), nil), addSnapshot(2, nil, 3, time.Now(), nil))
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Equal(t, "snapshot-sequence-not-increasing", errorReason(t, r))
			for _, name := range []string{"future", "decreasing"} {
				require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/"+name, nil).status, "nothing may be created")
			}
			r = create("fine", addSnapshot(1, nil, 1, time.Now(), nil), setMainRef(1))
			require.Equal(t, 200, r.status, "%s", r.body)
			requireTableHealthy(t, b, "fine")
		})
	}
}

// TestHostileMetadataTransaction: one hostile change fails a multi-table
// transaction as a whole.
func TestHostileMetadataTransaction(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := metaSetup(t, backend)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "good", nil).status)
			require.Equal(t, 200, b.createTable(t, "ns", "bad", nil).status)
			good, bad := loadTableState(t, b, "good"), loadTableState(t, b, "bad")
			change := func(name string, updates ...any) map[string]any {
				return map[string]any{"identifier": map[string]any{"namespace": []string{"ns"}, "name": name},
					"requirements": []any{}, "updates": updates}
			}
			r := b.do(t, "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{
				change("good", map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}}),
				change("bad", addSnapshot(12, nil, 5, time.Now(), nil), addSnapshot(13, nil, 3, time.Now(), nil)),
			}})
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Equal(t, "snapshot-sequence-not-increasing", errorReason(t, r))
			require.Equal(t, good, loadTableState(t, b, "good"))
			require.Equal(t, bad, loadTableState(t, b, "bad"))
			requireTableHealthy(t, b, "good")
			requireTableHealthy(t, b, "bad")
		})
	}
}
