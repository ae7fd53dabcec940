package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/stitch"
)

// TestCompactionRoutes drives a compaction as another engine would: plan
// over HTTP, rewrite the base (here with package compact), commit the
// rewrite over HTTP. The new file keeps first_row_id, no row ids are
// assigned, and a replay of the commit is refused.
func TestCompactionRoutes(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 5})
			s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 5, 10, false, false)
			require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 5, []int{3}, s1)).status)
			r := b.do(t, "POST", vt.path, map[string]any{"updates": []any{map[string]any{"action": "set-properties",
				"updates": map[string]string{compact.PropMaxFiles: "0"}}}})
			require.Equal(t, 200, r.status, "%s", r.body)

			r = b.do(t, "POST", vt.path+"/compaction-plan", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			var plan struct {
				MaxColumnFiles int `json:"max-column-files"`
				Candidates     []struct {
					DataFile    string   `json:"data-file"`
					RecordCount int64    `json:"record-count"`
					FirstRowID  int64    `json:"first-row-id"`
					Reasons     []string `json:"reasons"`
					ColumnFiles []struct {
						Location string `json:"location"`
						FieldIDs []int  `json:"field-ids"`
					} `json:"column-files"`
				} `json:"candidates"`
			}
			require.NoError(t, json.Unmarshal(r.body, &plan))
			require.Equal(t, 0, plan.MaxColumnFiles)
			require.Len(t, plan.Candidates, 1)
			c := plan.Candidates[0]
			require.Equal(t, vt.loc+"/data/a.parquet", c.DataFile)
			require.Equal(t, []string{compact.ReasonTooManyFiles}, c.Reasons)
			require.Len(t, c.ColumnFiles, 1)

			task := stitch.Task{DataFile: c.DataFile, RecordCount: c.RecordCount,
				ColumnFiles: []stitch.ColumnFile{{Location: c.ColumnFiles[0].Location, FieldIDs: c.ColumnFiles[0].FieldIDs}}}
			var sc iceberg.Schema
			require.NoError(t, json.Unmarshal([]byte(wideSchemaJSON), &sc))
			f, err := os.Create(filepath.Join(vt.dir, "data/a-folded.parquet"))
			require.NoError(t, err)
			out, err := compact.Rewrite(context.Background(), func(_ context.Context, loc string) (stitch.File, error) {
				return os.Open(vt.dir + loc[len(vt.loc):])
			}, f, compact.Input{Task: task, FirstRowID: c.FirstRowID, Schema: &sc})
			require.NoError(t, err)
			require.NoError(t, f.Close())
			body := map[string]any{"rewrites": []any{map[string]any{"data-file": "data/a.parquet", "column-files": []string{"data/cf1.parquet"},
				"location": "data/a-folded.parquet", "file-size-in-bytes": out.Bytes, "record-count": out.Rows}}}
			r = b.do(t, "POST", vt.path+"/compaction", body)
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, next := v4Meta(t, r)
			require.Equal(t, "replace", snaps[len(snaps)-1].Summary["operation"])
			require.Equal(t, int64(5), next, "compaction assigns no row ids")
			folded, _ := vt.liveRow(t, "a-folded.parquet")
			require.Equal(t, int64(0), *folded.Tracking.FirstRowID)
			require.Empty(t, folded.ColumnFiles)

			r = b.do(t, "POST", vt.path+"/compaction", body)
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Contains(t, string(r.body), "already a live file", "the replay names the folded file")
		})
	}
}
