package service_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// TestExpiryKeepsReaddedFiles lands a commit that adds an expiring file
// (data/b.parquet, which only the expired snapshots reference) again in
// the middle of an expiry's clean-up. Landed after the remove-snapshots
// commit but before the queued files are recorded, it is seen by the
// clean-up's re-read: the file survives and the table reads it. Tried
// after the recording, it is refused with 409 and nothing is committed;
// the file is deleted and keeps a tombstone. Either way no committed file is lost.
func TestExpiryKeepsReaddedFiles(t *testing.T) {
	for _, at := range []string{service.ExpireCommitted, service.ExpireClaimed} {
		t.Run(at, func(t *testing.T) {
			e := newMaintEnv(t)
			bFile := filepath.Join(e.dir, "data", "b.parquet")
			info, err := os.Stat(bFile)
			require.NoError(t, err)
			readd := service.FilesCommit{Ident: e.id, AddDataFiles: []service.DataFileInput{{
				Location: "data/b.parquet", FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: info.Size()}}}
			var commitErr error
			committed := false
			step := func(s string) {
				if s == at {
					_, commitErr = e.svc.CommitFiles(e.ctx, "wh", readd)
					committed = commitErr == nil
				}
			}
			rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Minute), RetainLast: 1, Step: step})
			require.NoError(t, err)
			require.Len(t, rep.ExpiredSnapshots, 3)
			plan, err := e.svc.Planner().PlanScan(e.ctx, "wh", e.id, service.PlanRequest{CaseSensitive: true, ColumnFilesOK: true})
			require.NoError(t, err, "every file the table references exists")
			rows, err := e.st.ListPendingDeletes(e.ctx, e.uuid)
			require.NoError(t, err)
			require.Empty(t, rows, "the queue is drained")

			if at == service.ExpireCommitted {
				require.NoError(t, commitErr)
				require.FileExists(t, bFile, "re-added before the recording: the re-read keeps it")
				require.NotContains(t, rep.DeletedFiles, "data/b.parquet")
				require.Contains(t, rep.DeletedFiles, "data/cf1.parquet", "the rest of the clean-up went on")
				require.Len(t, plan.Tasks, 2)
				return
			}
			require.False(t, committed)
			require.Equal(t, fault.CommitFailed, fault.KindOf(commitErr), "409: the expiry holds the file")
			require.Contains(t, commitErr.Error(), "b.parquet")
			require.NoFileExists(t, bFile, "refused, so unreferenced, so deleted")
			require.Contains(t, rep.DeletedFiles, "data/b.parquet")
			require.Len(t, plan.Tasks, 1)
			obj, err := e.st.ObjectGet(e.ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
			require.NoError(t, err)
			cands, err := e.st.ListOrphanCandidates(e.ctx, obj.ID)
			require.NoError(t, err)
			require.NotEmpty(t, cands)
			tombs := map[string]bool{}
			for _, c := range cands {
				require.Equal(t, store.OrphanDeleted, c.State, "only tombstones of deleted files remain")
				tombs[filepath.Base(c.Location)] = true
			}
			require.True(t, tombs["b.parquet"], "its tombstone refuses the same commit sent later")
		})
	}
}
