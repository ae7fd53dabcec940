package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/compact"
)

type debtAnswer struct {
	SnapshotID      *int64  `json:"snapshot-id"`
	Bases           int     `json:"bases"`
	ColumnFiles     int     `json:"column-files"`
	MaxPerBase      int     `json:"max-column-files-per-base"`
	Measured        int     `json:"measured-bases"`
	RetiredBytes    int64   `json:"retired-bytes"`
	MeasuredBytes   int64   `json:"measured-bytes"`
	Candidates      int     `json:"candidates"`
	MaxColumnFiles  int     `json:"max-column-files"`
	MaxRetiredRatio float64 `json:"max-retired-ratio"`
}

func readDebt(t *testing.T, b *bundle, table string, snap int64) debtAnswer {
	t.Helper()
	path := "/management/v1/warehouses/wh/namespaces/ns/tables/" + table + "/column-file-debt"
	if snap != 0 {
		path += fmt.Sprintf("?snapshot-id=%d", snap)
	}
	r := b.do(t, "GET", path, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var d debtAnswer
	require.NoError(t, json.Unmarshal(r.body, &d))
	return d
}

// baseColumnBytes reads the compressed bytes per field of a base file the
// test wrote, independently of the route.
func baseColumnBytes(t *testing.T, path string) map[int]int64 {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out, err := compact.ColumnBytes(f, nil)
	require.NoError(t, err)
	return out
}

// TestColumnFileDebtRoute: the debt route counts live column files per
// base at the current and at a past snapshot, and its retired bytes are
// the base columns the live column files supersede, as the footers say
// and as compaction planning counts them.
func TestColumnFileDebtRoute(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 5, "b.parquet": 5})
			_, snaps, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			first := snaps[len(snaps)-1].SnapshotID

			s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 5, 1, false, false)
			r := vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 5, []int{3}, s1))
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, _ = v4Meta(t, r)
			afterOne := snaps[len(snaps)-1].SnapshotID
			s2 := writeScores(t, filepath.Join(vt.dir, "data/cf2.parquet"), 5, 2, true, false)
			require.Equal(t, 200, vt.commit(t, vt.columnFile("b.parquet", "cf2.parquet", 5, []int{3, 4}, s2)).status)
			// cf3 retires cf1; cf4 gives a its second live column file.
			s3 := writeScores(t, filepath.Join(vt.dir, "data/cf3.parquet"), 5, 3, false, false)
			s4 := writeParquet(t, filepath.Join(vt.dir, "data/cf4.parquet"), []arrow.Field{{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldMD(4)}},
				func(rb *array.RecordBuilder) {
					for range 5 {
						rb.Field(0).(*array.StringBuilder).Append("new")
					}
				})
			require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "cf3.parquet", 5, []int{3}, s3), vt.columnFile("a.parquet", "cf4.parquet", 5, []int{4}, s4)).status)
			r = b.do(t, "POST", vt.path, map[string]any{"updates": []any{map[string]any{"action": "set-properties",
				"updates": map[string]string{compact.PropMaxFiles: "1"}}}})
			require.Equal(t, 200, r.status, "%s", r.body)

			a := baseColumnBytes(t, filepath.Join(vt.dir, "data/a.parquet"))
			bb := baseColumnBytes(t, filepath.Join(vt.dir, "data/b.parquet"))
			sizeA, err := os.Stat(filepath.Join(vt.dir, "data/a.parquet"))
			require.NoError(t, err)
			sizeB, err := os.Stat(filepath.Join(vt.dir, "data/b.parquet"))
			require.NoError(t, err)

			now := readDebt(t, b, "wide", 0)
			require.NotNil(t, now.SnapshotID)
			require.Equal(t, 2, now.Bases)
			require.Equal(t, 3, now.ColumnFiles, "cf2, cf3, cf4: cf1 was retired")
			require.Equal(t, 2, now.MaxPerBase)
			require.Equal(t, 2, now.Measured)
			require.Equal(t, a[3]+a[4]+bb[3]+bb[4], now.RetiredBytes, "score and label of both bases are superseded")
			require.Equal(t, sizeA.Size()+sizeB.Size(), now.MeasuredBytes)
			require.Equal(t, 1, now.MaxColumnFiles)
			require.Equal(t, compact.DefaultMaxRetiredRatio, now.MaxRetiredRatio)
			require.Equal(t, 1, now.Candidates, "only a has more than one column file")

			// The plan (every base picked) counts the same retired bytes.
			r = b.do(t, "POST", vt.path, map[string]any{"updates": []any{map[string]any{"action": "set-properties",
				"updates": map[string]string{compact.PropMaxFiles: "0"}}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			var plan struct {
				Candidates []struct {
					RetiredBytes int64 `json:"retired-bytes"`
				} `json:"candidates"`
			}
			r = b.do(t, "POST", vt.path+"/compaction-plan", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.NoError(t, json.Unmarshal(r.body, &plan))
			require.Len(t, plan.Candidates, 2)
			require.Equal(t, now.RetiredBytes, plan.Candidates[0].RetiredBytes+plan.Candidates[1].RetiredBytes)

			past := readDebt(t, b, "wide", afterOne)
			require.Equal(t, afterOne, *past.SnapshotID)
			require.Equal(t, debtAnswer{SnapshotID: past.SnapshotID, Bases: 1, ColumnFiles: 1, MaxPerBase: 1, Measured: 1, RetiredBytes: a[3],
				MeasuredBytes: sizeA.Size(), MaxColumnFiles: 0, MaxRetiredRatio: compact.DefaultMaxRetiredRatio, Candidates: 1}, past,
				"at the first update only a's score was superseded; the table's thresholds (now max-files 0) apply")
			require.Equal(t, debtAnswer{SnapshotID: &first, MaxRetiredRatio: compact.DefaultMaxRetiredRatio}, readDebt(t, b, "wide", first))

			r = b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/ns/tables/wide/column-file-debt?snapshot-id=7", nil)
			require.Equal(t, 404, r.status, "%s", r.body)
			require.Equal(t, 200, b.createTable(t, "ns", "v2t", nil).status)
			r = b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/ns/tables/v2t/column-file-debt", nil)
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Contains(t, string(r.body), "table-not-v4")
			r = b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/ns/tables/nope/column-file-debt", nil)
			require.Equal(t, 404, r.status, "%s", r.body)
		})
	}
}
