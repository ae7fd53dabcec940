package tablemeta

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// sampleMetadata is a small table of format version (1 to 3) with one
// snapshot, encoded by iceberg-go.
func sampleMetadata(t testing.TB, version int) []byte {
	t.Helper()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	props := iceberg.Properties{"format-version": fmt.Sprint(version)}
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///wh/t", props)
	require.NoError(t, err)
	b, err := table.MetadataBuilderFromBase(meta, "")
	require.NoError(t, err)
	id, first, added := int64(1), int64(0), int64(10)
	snap := &table.Snapshot{SnapshotID: id, SequenceNumber: 1, TimestampMs: meta.LastUpdatedMillis() + 1,
		ManifestList: "file:///wh/t/metadata/snap-1.avro", Summary: &table.Summary{Operation: table.OpAppend}, SchemaID: &sc.ID}
	if version >= 3 {
		snap.FirstRowID, snap.AddedRows = &first, &added
	}
	require.NoError(t, b.AddSnapshot(snap))
	require.NoError(t, b.SetSnapshotRef("main", id, table.BranchRef))
	built, err := b.Build()
	require.NoError(t, err)
	data, err := json.Marshal(built)
	require.NoError(t, err)
	return data
}

// TestParseMatchesFullPath: Parse's shortcut for formats 1 to 3 answers
// what the full path (the only one before) answers, metadata, version and
// error text alike, for good, v4 and broken documents.
func TestParseMatchesFullPath(t *testing.T) {
	docs := map[string][]byte{
		"not json":        []byte(`{"format-version": 2`),
		"no version":      []byte(`{"table-uuid": "x"}`),
		"version string":  []byte(`{"format-version": "2"}`),
		"version 7":       []byte(`{"format-version": 7}`),
		"v2 missing keys": []byte(`{"format-version": 2}`),
	}
	for v := 1; v <= 3; v++ {
		docs[fmt.Sprintf("v%d", v)] = sampleMetadata(t, v)
	}
	var v4 map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(sampleMetadata(t, 3), &v4))
	v4["format-version"] = json.RawMessage("4")
	docs["v4"], _ = json.Marshal(v4)
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			m, v, err := Parse(data)
			fm, fv, ferr := parseAny(data)
			require.Equal(t, fv, v, "version")
			if ferr != nil {
				require.EqualError(t, err, ferr.Error())
				return
			}
			require.NoError(t, err)
			require.True(t, m.Equals(fm), "metadata differs")
			if name != "v4" {
				require.Equal(t, name, fmt.Sprintf("v%d", v))
			}
		})
	}
}

// processCPU is the CPU time this process has used so far: on cores
// shared with other work, wall time per op measures the neighbours too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// withMetadataLog is data with n metadata-log entries, as a table has
// after n commits (100 is the default cap, write.metadata.previous-versions-max).
func withMetadataLog(t testing.TB, data []byte, n int) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &doc))
	type entry struct {
		File string `json:"metadata-file"`
		Ts   int64  `json:"timestamp-ms"`
	}
	log := make([]entry, n)
	for i := range log {
		log[i] = entry{fmt.Sprintf("file:///warehouse/ns/t/metadata/%05d-6f1c2a9e-3b7d-4e8a-9c1f-2d3e4f5a6b7c.metadata.json", i), 1_700_000_000_000 + int64(i)}
	}
	doc["metadata-log"], _ = json.Marshal(log)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// BenchmarkParse is the read-back check's parse of a small v2 document,
// fresh and with the 100 metadata-log entries a much-committed table
// carries: Parse against the full path every document took before.
func BenchmarkParse(b *testing.B) {
	small := sampleMetadata(b, 2)
	for _, doc := range []struct {
		name string
		data []byte
	}{{"fresh", small}, {"log=100", withMetadataLog(b, small, 100)}} {
		for _, p := range []struct {
			name  string
			parse func([]byte) (table.Metadata, int, error)
		}{{"Parse", Parse}, {"full-path", parseAny}} {
			b.Run(doc.name+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(doc.data)))
				start := processCPU()
				for b.Loop() {
					if _, _, err := p.parse(doc.data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			})
		}
	}
}
