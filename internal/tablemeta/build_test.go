package tablemeta

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// indexCurrent reports whether meta is a doc whose snapshot index holds
// every snapshot of its list at its position.
func indexCurrent(t *testing.T, meta table.Metadata) bool {
	d, ok := meta.(*doc)
	require.True(t, ok, "a commit's metadata is a doc")
	if len(d.pos) != len(d.snaps) {
		return false
	}
	for i := range d.snaps {
		if d.pos[d.snaps[i].SnapshotID] != i {
			return false
		}
	}
	return true
}

// TestLightBuildKeepsHistoryAndIndex: appends built on the light base
// carry every earlier snapshot, keep a current snapshot index (else every
// lookup rebuilds it), and find every snapshot by id; a removal, which
// needs the whole list, takes the full builder and still works.
func TestLightBuildKeepsHistoryAndIndex(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	start, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///wh/t", iceberg.Properties{"format-version": "2"})
	require.NoError(t, err)
	data, err := Marshal(start, 2)
	require.NoError(t, err)
	entry, err := NewEntry(data)
	require.NoError(t, err)
	ts := start.LastUpdatedMillis()
	for id := int64(1); id <= 50; id++ {
		ups := fmt.Sprintf(`[{"action":"add-snapshot","snapshot":{"snapshot-id":%d,"sequence-number":%d,"timestamp-ms":%d,"manifest-list":"file:///wh/t/m%d.avro","summary":{"operation":"append"}}},`+
			`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%d}]`, id, id, ts+id, id, id)
		if id > 1 {
			ups = strings.Replace(ups, `"sequence-number"`, fmt.Sprintf(`"parent-snapshot-id":%d,"sequence-number"`, id-1), 1)
		}
		var parsed table.Updates
		require.NoError(t, json.Unmarshal([]byte(ups), &parsed))
		_, kept, light := lightBase(entry.Meta, parsed, ReadUpdates([]byte(ups)))
		require.True(t, light, "an append takes the light base")
		require.LessOrEqual(t, kept, 1, "the light base holds only the head of main")
		meta, changed, err := Build(entry, "file:///wh/t/metadata/x.json", false, parsed, ReadUpdates([]byte(ups)))
		require.NoError(t, err)
		require.True(t, changed)
		require.Len(t, meta.Snapshots(), int(id))
		require.True(t, indexCurrent(t, meta), "snapshot %d: stale index", id)
		for i := int64(1); i <= id; i++ {
			s := meta.SnapshotByID(i)
			require.NotNil(t, s)
			require.Equal(t, fmt.Sprintf("file:///wh/t/m%d.avro", i), s.ManifestList)
		}
		enc, ok, err := Encode(meta, 2, entry)
		require.NoError(t, err)
		require.True(t, ok)
		entry = &Entry{Meta: meta, Version: 2, Data: enc.Data, Spans: enc.Spans, NSnaps: len(enc.Spans)}
	}
	rm := `[{"action":"remove-snapshots","snapshot-ids":[1,2,3]}]`
	var parsed table.Updates
	require.NoError(t, json.Unmarshal([]byte(rm), &parsed))
	_, _, light := lightBase(entry.Meta, parsed, ReadUpdates([]byte(rm)))
	require.False(t, light, "a removal needs the whole list")
	meta, _, err := Build(entry, "file:///wh/t/metadata/y.json", false, parsed, ReadUpdates([]byte(rm)))
	require.NoError(t, err)
	require.Len(t, meta.Snapshots(), 47)
	require.Nil(t, meta.SnapshotByID(2))
	require.Equal(t, reflect.TypeOf(entry.Meta), reflect.TypeOf(meta))
}
