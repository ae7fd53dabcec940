package changeevents

import (
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// actions lists the "action" of each update in raw.
func actions(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var ups []map[string]any
	require.NoError(t, json.Unmarshal(raw, &ups))
	out := make([]string, len(ups))
	for i, u := range ups {
		out[i], _ = u["action"].(string)
	}
	return out
}

func TestCreateTableAndSnapshotUpdates(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	m, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///t", iceberg.Properties{"k": "v"})
	require.NoError(t, err)
	require.Equal(t, []string{"assign-uuid", "upgrade-format-version", "add-schema", "set-current-schema", "add-spec",
		"set-default-spec", "add-sort-order", "set-default-sort-order", "set-location", "set-properties"},
		actions(t, CreateTableUpdates(m, 2)))
	require.JSONEq(t, `[]`, string(SnapshotUpdates(m)), "no snapshot: nothing to describe")

	b, err := table.MetadataBuilderFromBase(m, "")
	require.NoError(t, err)
	require.NoError(t, b.AddSnapshot(&table.Snapshot{SnapshotID: 9, SequenceNumber: 1, TimestampMs: m.LastUpdatedMillis() + 1,
		ManifestList: "file:///t/metadata/snap-9.avro", Summary: &table.Summary{Operation: table.OpAppend}, SchemaID: &sc.ID}))
	require.NoError(t, b.SetSnapshotRef("main", 9, table.BranchRef))
	m, err = b.Build()
	require.NoError(t, err)
	raw := SnapshotUpdates(m)
	require.Equal(t, []string{"add-snapshot", "set-snapshot-ref"}, actions(t, raw))
	var ups []struct {
		SnapshotID int64 `json:"snapshot-id"`
	}
	require.NoError(t, json.Unmarshal(raw, &ups))
	require.Equal(t, int64(9), ups[1].SnapshotID)
	require.Equal(t, m.TableUUID().String(), MetadataUUID(mustJSON(t, m)))
}

func TestCreateViewUpdatesAndUUID(t *testing.T) {
	doc := []byte(`{"view-uuid":"u-1","format-version":1,"location":"s3://b/v","properties":{"a":"b"},
		"schemas":[{"schema-id":0,"type":"struct","fields":[]}],"versions":[{"version-id":1},{"version-id":2}]}`)
	require.Equal(t, []string{"assign-uuid", "upgrade-format-version", "set-location", "set-properties", "add-schema",
		"add-view-version", "add-view-version", "set-current-view-version"}, actions(t, CreateViewUpdates(doc)))
	require.JSONEq(t, `[]`, string(CreateViewUpdates([]byte("not json"))))
	require.Equal(t, "u-1", MetadataUUID(doc))
	require.Equal(t, "", MetadataUUID([]byte(`{}`)))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
