package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// setupPlan starts a catalog whose plans page after maxTasks tasks and
// whose commits write one file per leaf.
func setupPlan(t *testing.T, backend string, maxTasks int) *bundle {
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, MaxPlanTasks: maxTasks, MaxLeafEntries: 1})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	_, err := svc.CreateWarehouse(context.Background(), "wh", loc, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client()}
}

type planJSON struct {
	Status    string            `json:"status"`
	PlanID    string            `json:"plan-id"`
	PlanTasks []string          `json:"plan-tasks"`
	Tasks     []json.RawMessage `json:"file-scan-tasks"`
	Deletes   []json.RawMessage `json:"delete-files"`
}

// TestPlanTableScanREST: filters and paging through the REST routes, the
// REST DataFile JSON of a task, and the planning error bodies.
func TestPlanTableScanREST(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupPlan(t, backend, 2)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "p", map[string]any{"properties": map[string]string{"format-version": "4"},
				"schema": rawJSON(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"c2","type":"double","required":false}]}`)})
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, _, _ := v4Meta(t, r)
			dir := strings.TrimPrefix(loc, "file://")
			path := "/v1/wh/namespaces/ns/tables/p"
			var adds []any
			for k := 0; k < 6; k++ {
				name := fmt.Sprintf("data/f%d.parquet", k)
				size := writeWide(t, filepath.Join(dir, name), 10, []int{1, 2}, func(_, row int) float64 { return float64(100*k + row) })
				adds = append(adds, map[string]any{"location": name, "file-format": "parquet", "record-count": 10, "file-size-in-bytes": size, "spec-id": 0})
			}
			require.Equal(t, 200, b.do(t, "POST", path+"/files", map[string]any{"add-data-files": adds}).status)

			plan := func(body map[string]any) (planJSON, []string) {
				t.Helper()
				r := b.do(t, "POST", path+"/plan", body)
				require.Equal(t, 200, r.status, "%s", r.body)
				var p planJSON
				require.NoError(t, json.Unmarshal(r.body, &p))
				require.Equal(t, "completed", p.Status)
				require.NotEmpty(t, p.PlanID)
				got := taskFiles(t, p.Tasks)
				for _, tok := range p.PlanTasks {
					r := b.do(t, "POST", path+"/tasks", map[string]any{"plan-task": tok})
					require.Equal(t, 200, r.status, "%s", r.body)
					var page planJSON
					require.NoError(t, json.Unmarshal(r.body, &page))
					got = append(got, taskFiles(t, page.Tasks)...)
				}
				slices.Sort(got)
				return p, got
			}
			p, got := plan(map[string]any{"filter": json.RawMessage(`{"type":"and","left":{"type":"gt-eq","term":"c2","value":300},"right":{"type":"lt","term":"c2","value":400}}`)})
			require.Equal(t, []string{"data/f3.parquet"}, got)
			require.Empty(t, p.PlanTasks)
			var task struct {
				DataFile map[string]json.RawMessage `json:"data-file"`
			}
			require.NoError(t, json.Unmarshal(p.Tasks[0], &task))
			for _, k := range []string{"content", "file-path", "file-format", "spec-id", "partition", "file-size-in-bytes", "record-count", "value-counts", "null-value-counts"} {
				require.Contains(t, task.DataFile, k)
			}
			require.JSONEq(t, `"data"`, string(task.DataFile["content"]))
			require.JSONEq(t, `"parquet"`, string(task.DataFile["file-format"]))
			require.JSONEq(t, `[]`, string(task.DataFile["partition"]))
			require.JSONEq(t, `{"keys":[1,2],"values":[10,10]}`, string(task.DataFile["value-counts"]))

			// stats-fields: only c2's counts; an empty list, none (the same
			// file planned, by the filter on c2's stats).
			p, _ = plan(map[string]any{"stats-fields": []string{"c2"},
				"filter": json.RawMessage(`{"type":"and","left":{"type":"gt-eq","term":"c2","value":300},"right":{"type":"lt","term":"c2","value":400}}`)})
			require.NoError(t, json.Unmarshal(p.Tasks[0], &task))
			require.JSONEq(t, `{"keys":[2],"values":[10]}`, string(task.DataFile["value-counts"]))
			p, got = plan(map[string]any{"stats-fields": []string{},
				"filter": json.RawMessage(`{"type":"and","left":{"type":"gt-eq","term":"c2","value":300},"right":{"type":"lt","term":"c2","value":400}}`)})
			require.Equal(t, []string{"data/f3.parquet"}, got)
			task.DataFile = nil
			require.NoError(t, json.Unmarshal(p.Tasks[0], &task))
			require.NotContains(t, task.DataFile, "value-counts")
			require.NotContains(t, task.DataFile, "null-value-counts")
			r = b.do(t, "POST", path+"/plan", map[string]any{"stats-fields": []string{"nope"}})
			typ, msg := r.errorOf(t)
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Equal(t, "BadRequestException", typ)
			require.Contains(t, msg, "nope")

			p, got = plan(map[string]any{})
			require.NotEmpty(t, p.PlanTasks, "six tasks over a limit of two are paged")
			require.Equal(t, []string{"data/f0.parquet", "data/f1.parquet", "data/f2.parquet", "data/f3.parquet", "data/f4.parquet", "data/f5.parquet"}, got)

			r = b.do(t, "POST", path+"/plan", map[string]any{"filter": json.RawMessage(`{"type":"eq","term":"nope","value":1}`)})
			typ, msg = r.errorOf(t)
			require.Equal(t, 400, r.status)
			require.Equal(t, "BadRequestException", typ)
			require.Contains(t, msg, "nope")
			r = b.do(t, "POST", path+"/plan", map[string]any{"snapshot-id": 424242})
			typ, _ = r.errorOf(t)
			require.Equal(t, 404, r.status)
			require.Equal(t, "NotFoundException", typ)
			r = b.do(t, "POST", path+"/tasks", map[string]any{"plan-task": "forged"})
			typ, _ = r.errorOf(t)
			require.Equal(t, "NoSuchPlanTaskException", typ)
			r = b.do(t, "GET", path+"/plan/"+p.PlanID, nil)
			typ, _ = r.errorOf(t)
			require.Equal(t, "NoSuchPlanIdException", typ)
			require.Equal(t, 204, b.do(t, "DELETE", path+"/plan/"+p.PlanID, nil).status)
		})
	}
}

// taskFiles are the data files of REST file scan tasks, relative to the
// table.
func taskFiles(t *testing.T, tasks []json.RawMessage) []string {
	var out []string
	for _, raw := range tasks {
		var task struct {
			DataFile struct {
				FilePath string `json:"file-path"`
			} `json:"data-file"`
		}
		require.NoError(t, json.Unmarshal(raw, &task))
		_, rel, _ := strings.Cut(task.DataFile.FilePath, "/data/")
		out = append(out, "data/"+rel)
	}
	return out
}
