package service_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service"
)

// TestPlanScanStatsFields: stats-fields picks the fields whose counts the
// tasks carry (all when absent, none when empty), on one page and across
// plan tasks; a filter still prunes by the stats of its fields when none
// are returned; an unknown name is a 400.
func TestPlanScanStatsFields(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{MaxPlanTasks: 3, MaxLeafEntries: 2})
			ctx := context.Background()
			// tasks plans req and returns every task, paging through plan
			// tasks as a client would.
			tasks := func(req service.PlanRequest) []service.ScanTask {
				res, err := f.svc.Planner().PlanScan(ctx, "wh", f.id, req)
				require.NoError(t, err)
				out := res.Tasks
				for _, tok := range res.PlanTasks {
					page, err := f.svc.Planner().FetchScanTasks(ctx, "wh", f.id, tok, false)
					require.NoError(t, err)
					out = append(out, page.Tasks...)
				}
				require.NotEmpty(t, out)
				return out
			}
			countKeys := func(ts []service.ScanTask) map[int]bool {
				keys := map[int]bool{}
				for _, task := range ts {
					for id := range task.ValueCounts {
						keys[id] = true
					}
					for id := range task.NullValueCounts {
						keys[id] = true
					}
				}
				return keys
			}

			all := tasks(service.PlanRequest{CaseSensitive: true})
			require.Len(t, all, 8)
			require.Equal(t, map[int]bool{1: true, 3: true}, countKeys(all), "no stats-fields: every field's counts")

			none := tasks(service.PlanRequest{CaseSensitive: true, StatsFields: []string{}})
			require.Len(t, none, 8)
			require.Empty(t, countKeys(none), "empty stats-fields: no counts")

			score := tasks(service.PlanRequest{CaseSensitive: true, StatsFields: []string{"score"}})
			require.Equal(t, map[int]bool{3: true}, countKeys(score))
			for _, task := range score {
				require.Equal(t, int64(planRows), task.ValueCounts[3], task.Location)
			}
			upper := tasks(service.PlanRequest{CaseSensitive: false, StatsFields: []string{"SCORE"}})
			require.Equal(t, map[int]bool{3: true}, countKeys(upper), "names follow case-sensitive")

			// The filter reads id's stats to prune, but returns none of them.
			req := service.PlanRequest{CaseSensitive: true, StatsFields: []string{},
				Filter: json.RawMessage(`{"type":"and","left":{"type":"gt-eq","term":"id","value":250},"right":{"type":"lt","term":"id","value":400}}`)}
			got, _, err := f.plan(t, req)
			require.NoError(t, err)
			require.Equal(t, files(2, 3), got)
			require.Empty(t, countKeys(tasks(req)))

			_, err = f.svc.Planner().PlanScan(ctx, "wh", f.id, service.PlanRequest{CaseSensitive: true, StatsFields: []string{"nope"}})
			require.Equal(t, fault.BadRequest, fault.KindOf(err), "%v", err)
			require.Contains(t, err.Error(), `"nope"`)
		})
	}
}
