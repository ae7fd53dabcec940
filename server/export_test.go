package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/puffin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportTable exports a v4 table with a column file and a deletion
// vector: refused while the column file is pending, then, with compact
// (the base folded into the new table), a format 3 table in its own location whose manifests list copies of the
// live files with their first_row_id and the deletion vector, and which
// outlives a purge of the source.
func TestExportTable(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			b.createNamespace(t, "back")
			vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 5, "b.parquet": 3})
			s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 5, 10, false, false)
			require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 5, []int{3}, s1)).status)
			dvB := writeDV(t, vt, "data/b-dv.puffin", vt.loc+"/data/b.parquet", 1)
			r := b.do(t, "POST", vt.path+"/files", map[string]any{"set-deletion-vectors": []any{dvB.request("data/b.parquet")}})
			require.Equal(t, 200, r.status, "%s", r.body)
			_, _, srcNext := v4Meta(t, b.do(t, "GET", vt.path, nil))

			dest := map[string]any{"destination": map[string]any{"namespace": []string{"back"}, "name": "wide3"}}
			r = b.do(t, "POST", vt.path+"/export", dest)
			require.Equal(t, 400, r.status, "%s", r.body)
			assert.Contains(t, string(r.body), "column-files-pending")
			assert.Contains(t, string(r.body), "data/a.parquet")
			assert.NotContains(t, string(r.body), vt.dir, "no server path")
			require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/back/tables/wide3", nil).status, "a refused export creates nothing")

			dest["compact"] = true
			r = b.do(t, "POST", vt.path+"/export", dest)
			require.Equal(t, 200, r.status, "%s", r.body)
			var res struct {
				MetadataLocation string `json:"metadata-location"`
				Metadata         struct {
					FormatVersion int    `json:"format-version"`
					Location      string `json:"location"`
					NextRowID     int64  `json:"next-row-id"`
					Snapshots     []struct {
						ManifestList string `json:"manifest-list"`
					} `json:"snapshots"`
				} `json:"metadata"`
			}
			require.NoError(t, json.Unmarshal(r.body, &res))
			md := res.Metadata
			require.Equal(t, 3, md.FormatVersion)
			require.NotEqual(t, vt.loc, md.Location)
			require.GreaterOrEqual(t, md.NextRowID, srcNext)
			require.Len(t, md.Snapshots, 1)

			dir := strings.TrimPrefix(md.Location, "file://")
			local := func(loc string) string { return dir + strings.TrimPrefix(loc, md.Location) }
			lf, err := os.Open(local(md.Snapshots[0].ManifestList))
			require.NoError(t, err)
			defer lf.Close()
			manifests, err := iceberg.ReadManifestList(lf)
			require.NoError(t, err)
			var data, dvs []iceberg.DataFile
			for _, m := range manifests {
				f, err := os.Open(local(m.FilePath()))
				require.NoError(t, err)
				entries, err := iceberg.ReadManifest(m, f, true)
				require.NoError(t, f.Close())
				require.NoError(t, err)
				for _, e := range entries {
					df := e.DataFile()
					require.True(t, strings.HasPrefix(df.FilePath(), md.Location+"/"), "%s is inside the new table", df.FilePath())
					if df.ContentType() == iceberg.EntryContentData {
						data = append(data, df)
					} else {
						dvs = append(dvs, df)
					}
				}
			}
			require.Len(t, data, 2)
			require.Len(t, dvs, 1)
			assert.Equal(t, md.Location+"/data/b.parquet", *dvs[0].ReferencedDataFile())
			assert.Equal(t, int64(1), dvs[0].Count())
			pf, err := os.Open(local(dvs[0].FilePath()))
			require.NoError(t, err)
			defer pf.Close()
			pr, err := puffin.NewReader(pf)
			require.NoError(t, err)
			require.Len(t, pr.Blobs(), 1)
			blob := pr.Blobs()[0]
			assert.Equal(t, *dvs[0].ContentOffset(), blob.Offset)
			assert.Equal(t, md.Location+"/data/b.parquet", blob.Properties["referenced-data-file"],
				"the Puffin blob names the copy, as readers that match by it (PyIceberg) need")
			rowIDs := map[int64]bool{}
			for _, df := range data {
				require.NotNil(t, df.FirstRowID())
				rowIDs[*df.FirstRowID()] = true
				if strings.HasSuffix(df.FilePath(), "/data/a.parquet") {
					assert.Equal(t, []float64{10, 11, 12, 13, 14}, scores(t, local(df.FilePath())), "the column file's values are in the fold")
				}
			}
			assert.Len(t, rowIDs, 2, "each file keeps its own first_row_id")

			r = b.do(t, "POST", vt.path+"/export", dest)
			require.Equal(t, 409, r.status, "%s", r.body)

			require.Equal(t, 204, b.do(t, "DELETE", vt.path+"?purgeRequested=true", nil).status)
			for _, df := range append(data, dvs...) {
				_, err := os.Stat(local(df.FilePath()))
				require.NoError(t, err, "the export's files outlive the source")
			}
		})
	}
}

// scores reads the score column of a Parquet file.
func scores(t *testing.T, path string) []float64 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(t.Context())
	require.NoError(t, err)
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("score")
	require.Len(t, idx, 1)
	var out []float64
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		out = append(out, c.(*array.Float64).Float64Values()...)
	}
	return out
}

// TestExportFoldsIntoTheNewTable: an export with compact writes each
// base with column files once, folded, into the new table: the source
// keeps its snapshot, and the bytes written under the new table's data/
// are at most 1.15 times the source's live data bytes (base files, column
// files, deletion vectors). With fold-source the source is compacted
// first (a new snapshot there) and the folded file copied; fold-source
// without compact is a 400.
func TestExportFoldsIntoTheNewTable(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			b.createNamespace(t, "back")
			vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 2000, "b.parquet": 1000})
			s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 2000, 10, false, false)
			require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 2000, []int{3}, s1)).status)
			dvB := writeDV(t, vt, "data/b-dv.puffin", vt.loc+"/data/b.parquet", 1)
			r := b.do(t, "POST", vt.path+"/files", map[string]any{"set-deletion-vectors": []any{dvB.request("data/b.parquet")}})
			require.Equal(t, 200, r.status, "%s", r.body)
			before := currentSnapshot(t, b, vt.path)
			var live int64
			for _, f := range []string{"a.parquet", "b.parquet", "cf1.parquet", "b-dv.puffin"} {
				live += fileSize(t, filepath.Join(vt.dir, "data", f))
			}

			dest := map[string]any{"destination": map[string]any{"namespace": []string{"back"}, "name": "one"},
				"fold-source": true}
			require.Equal(t, 400, b.do(t, "POST", vt.path+"/export", dest).status, "fold-source needs compact")
			delete(dest, "fold-source")
			dest["compact"] = true
			r = b.do(t, "POST", vt.path+"/export", dest)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, before, currentSnapshot(t, b, vt.path), "the source is not changed")
			loc := exportedLocation(t, r.body)
			written := dirSize(t, filepath.Join(strings.TrimPrefix(loc, "file://"), "data"))
			require.Positive(t, written)
			require.LessOrEqual(t, float64(written), 1.15*float64(live), "written %d bytes for %d live bytes", written, live)
			t.Logf("export wrote %d data bytes for %d live bytes (%.2fx)", written, live, float64(written)/float64(live))
			dir := strings.TrimPrefix(loc, "file://")
			assert.Equal(t, 10.0, scores(t, filepath.Join(dir, "data/a.parquet"))[0], "the fold holds the column file's values")

			dest["destination"] = map[string]any{"namespace": []string{"back"}, "name": "two"}
			dest["fold-source"] = true
			r = b.do(t, "POST", vt.path+"/export", dest)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.NotEqual(t, before, currentSnapshot(t, b, vt.path), "fold-source compacts the source")
		})
	}
}

// currentSnapshot is the current-snapshot-id of the table at path.
func currentSnapshot(t *testing.T, b *bundle, path string) int64 {
	t.Helper()
	r := b.do(t, "GET", path, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		Metadata struct {
			Current int64 `json:"current-snapshot-id"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.NotZero(t, res.Metadata.Current)
	return res.Metadata.Current
}

// exportedLocation is the location of the table an export answered with.
func exportedLocation(t *testing.T, body []byte) string {
	t.Helper()
	var res struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &res))
	return res.Metadata.Location
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// dirSize is the total size of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return err
	}))
	return n
}
