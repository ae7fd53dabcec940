package server_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/compact"
)

// TestScheduledCompaction: with lakehold.compact-column-files.enabled, a
// column-file commit past the table's write.column-files.compact.*
// thresholds enqueues the table's compact-column-files job, which folds the
// base: the plan is empty afterwards and the folded file is there.
func TestScheduledCompaction(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		b.createNamespace(t, "ns")
		vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 5})
		r := b.do(t, "POST", vt.path, map[string]any{"updates": []any{map[string]any{"action": "set-properties",
			"updates": map[string]string{compact.PropMaxFiles: "0", "lakehold.compact-column-files.enabled": "true",
				"lakehold.compact-column-files.delay-ms": "0"}}}})
		require.Equal(t, 200, r.status, "%s", r.body)
		s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 5, 10, false, false)
		require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 5, []int{3}, s1)).status)
		require.Len(t, b.jobs(t, "?kind=compact-column-files").Jobs, 1, "one job per table, whatever the commits")

		b.drainJobs(t)
		r = b.do(t, "POST", vt.path+"/compaction-plan", nil)
		require.Equal(t, 200, r.status, "%s", r.body)
		var plan struct {
			Candidates []any `json:"candidates"`
		}
		require.NoError(t, json.Unmarshal(r.body, &plan))
		require.Empty(t, plan.Candidates, "the job folded the base")
		folded, err := filepath.Glob(filepath.Join(vt.dir, "data", "compacted-*.parquet"))
		require.NoError(t, err)
		require.Len(t, folded, 1, "the job wrote one folded file")
		done := b.jobs(t, "?kind=compact-column-files&state=completed").Jobs
		require.Len(t, done, 1)
	})
}
