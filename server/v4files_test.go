package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/v4manifest"
)

// writeDataFile writes a Parquet data file for the test schema (id long
// required = field 1, data string = field 2) and returns its size.
func writeDataFile(t *testing.T, path string, ids ...int64) int64 {
	t.Helper()
	return writeParquet(t, path, []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldMD(1)},
		{Name: "data", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldMD(2)},
	}, func(b *array.RecordBuilder) {
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", id))
		}
	})
}

type v4Snapshot struct {
	SnapshotID   int64             `json:"snapshot-id"`
	RootManifest string            `json:"root-manifest"`
	ManifestList string            `json:"manifest-list"`
	FirstRowID   int64             `json:"first-row-id"`
	AddedRows    int64             `json:"added-rows"`
	Summary      map[string]string `json:"summary"`
}

func v4Meta(t *testing.T, r response) (loc string, snaps []v4Snapshot, nextRowID int64) {
	t.Helper()
	var res struct {
		Metadata struct {
			Location  string       `json:"location"`
			Snapshots []v4Snapshot `json:"snapshots"`
			NextRowID int64        `json:"next-row-id"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res), "%s", r.body)
	return res.Metadata.Location, res.Metadata.Snapshots, res.Metadata.NextRowID
}

func readManifestFile(t *testing.T, loc, table string, inherit *v4manifest.TrackedFile) []v4manifest.TrackedFile {
	t.Helper()
	f, err := os.Open(strings.TrimPrefix(loc, "file://"))
	require.NoError(t, err)
	defer f.Close()
	r, err := v4manifest.NewReader(f, v4manifest.ReaderOptions{TableLocation: table, InheritFrom: inherit})
	require.NoError(t, err)
	rows, err := r.All(context.Background())
	require.NoError(t, err)
	return rows
}

// TestFilesCommit: add files (stats given, and derived from the footer),
// then remove one; the server writes leaf and root manifests, rewriting
// only the leaf that held the removed file.
func TestFilesCommit(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "t", map[string]any{"properties": map[string]string{"format-version": "4"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			tableLoc, _, _ := v4Meta(t, r)
			dir := strings.TrimPrefix(tableLoc, "file://")
			sizeA := writeDataFile(t, filepath.Join(dir, "data/a.parquet"), 1, 2, 3)
			sizeB := writeDataFile(t, filepath.Join(dir, "data/b.parquet"), 10, 20)

			commit := map[string]any{
				"requirements": []any{map[string]any{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": nil}},
				"add-data-files": []any{
					map[string]any{"location": tableLoc + "/data/a.parquet", "file-format": "parquet", "record-count": 3,
						"file-size-in-bytes": sizeA, "spec-id": 0},
					map[string]any{"location": "data/b.parquet", "file-format": "parquet", "record-count": 2,
						"file-size-in-bytes": sizeB, "spec-id": 0,
						"content-stats": map[string]any{"1": map[string]any{"lower-bound": 10, "upper-bound": 20, "value-count": 2, "null-value-count": 0}}},
				},
				"snapshot-properties": map[string]string{"job": "load"},
			}
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", commit)
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, nextRowID := v4Meta(t, r)
			require.Len(t, snaps, 1)
			s1 := snaps[0]
			require.NotEmpty(t, s1.RootManifest, "v4 snapshots name their root manifest")
			require.Empty(t, s1.ManifestList)
			require.Equal(t, "append", s1.Summary["operation"])
			require.Equal(t, "load", s1.Summary["job"])
			require.Equal(t, int64(5), s1.AddedRows)
			require.Equal(t, int64(5), nextRowID)

			root := readManifestFile(t, s1.RootManifest, tableLoc, nil)
			require.Len(t, root, 1)
			require.Equal(t, v4manifest.ContentDataManifest, root[0].ContentType)
			require.Equal(t, int32(2), root[0].ManifestInfo.AddedFiles)
			require.Equal(t, int64(5), root[0].ManifestInfo.AddedRows)
			leaf := readManifestFile(t, root[0].Location, tableLoc, &root[0])
			require.Len(t, leaf, 2)
			require.Equal(t, tableLoc+"/data/a.parquet", leaf[0].Location)
			require.Equal(t, int64(0), *leaf[0].Tracking.FirstRowID)
			require.Equal(t, int64(3), *leaf[1].Tracking.FirstRowID)
			footer := leaf[0].ContentStats[1]
			require.NotNil(t, footer, "stats derived from the footer")
			require.Equal(t, int64(1), footer.LowerBound)
			require.Equal(t, int64(3), footer.UpperBound)
			require.Equal(t, "v1", leaf[0].ContentStats[2].LowerBound)
			require.Equal(t, int64(10), leaf[1].ContentStats[1].LowerBound, "stats as given")
			require.Equal(t, int64(1), root[0].ContentStats[1].LowerBound, "root row aggregates its leaf")
			require.Equal(t, int64(20), root[0].ContentStats[1].UpperBound)

			// The same requirement now fails: main exists.
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", commit)
			require.Equal(t, 409, r.status)

			// A second append adds a leaf; the first is carried forward.
			sizeC := writeDataFile(t, filepath.Join(dir, "data/c.parquet"), 7)
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"add-data-files": []any{
				map[string]any{"location": "data/c.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": sizeC, "spec-id": 0}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, _ = v4Meta(t, r)
			root = readManifestFile(t, snaps[1].RootManifest, tableLoc, nil)
			require.Len(t, root, 2)
			require.Equal(t, v4manifest.StatusExisting, root[0].Tracking.Status)
			require.Equal(t, v4manifest.StatusAdded, root[1].Tracking.Status)

			// Remove b: only the first leaf is rewritten.
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"remove-files": []string{tableLoc + "/data/b.parquet"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, _ = v4Meta(t, r)
			s3 := snaps[2]
			require.Equal(t, "delete", s3.Summary["operation"])
			root = readManifestFile(t, s3.RootManifest, tableLoc, nil)
			statuses := []v4manifest.Status{}
			for _, rr := range root {
				statuses = append(statuses, rr.Tracking.Status)
			}
			require.Equal(t, []v4manifest.Status{v4manifest.StatusDeleted, v4manifest.StatusAdded, v4manifest.StatusExisting}, statuses)
			rewritten := readManifestFile(t, root[1].Location, tableLoc, &root[1])
			require.Equal(t, v4manifest.StatusExisting, rewritten[0].Tracking.Status)
			require.Equal(t, v4manifest.StatusDeleted, rewritten[1].Tracking.Status)
			require.Equal(t, tableLoc+"/data/b.parquet", rewritten[1].Location)
			require.Equal(t, int32(1), root[1].ManifestInfo.DeletedFiles)

			// Validation failures change nothing.
			cases := []struct {
				body   map[string]any
				reason string
			}{
				{map[string]any{"remove-files": []string{"data/nope.parquet"}}, "unknown-data-file"},
				{map[string]any{"add-data-files": []any{map[string]any{"location": "data/c.parquet", "file-format": "parquet", "record-count": 99, "file-size-in-bytes": sizeC, "spec-id": 0}}}, "record-count-mismatch"},
				{map[string]any{"add-data-files": []any{map[string]any{"location": "data/c.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": 1, "spec-id": 0}}}, "file-size-mismatch"},
				{map[string]any{"add-data-files": []any{map[string]any{"location": "data/c.orc", "file-format": "orc", "record-count": 1, "file-size-in-bytes": 1, "spec-id": 0}}}, "unsupported-file-format"},
				{map[string]any{"add-data-files": []any{map[string]any{"location": "data/missing.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": 1, "spec-id": 0}}}, "data-file-unreadable"},
				{map[string]any{"add-data-files": []any{map[string]any{"location": "data/missing.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": 1, "spec-id": 0,
					"content-stats": map[string]any{}}}}, "file-missing"},
				{map[string]any{"add-data-files": []any{map[string]any{"location": "file:///elsewhere/x.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": 1, "spec-id": 0}}}, "location-outside-table"},
			}
			for _, c := range cases {
				r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", c.body)
				require.Equal(t, 400, r.status, "%s", r.body)
				typ, _ := r.errorOf(t)
				require.Equal(t, "ValidationException", typ)
				require.Equal(t, c.reason, r.json(t)["error"].(map[string]any)["reason"])
			}
			_, after, _ := v4Meta(t, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil))
			require.Len(t, after, 3, "rejected commits add no snapshot")

			// Not a v4 table.
			require.Equal(t, 200, b.createTable(t, "ns", "old", nil).status)
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/old/files", map[string]any{"remove-files": []string{"x"}})
			require.Equal(t, 400, r.status)
			require.Equal(t, "table-not-v4", r.json(t)["error"].(map[string]any)["reason"])
		})
	}
}
