package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// orphanAfter is the case of orphanRace whose commit, prepared before the
// removal (the file read and checked), is sent after it finished.
const orphanAfter = "after"

// TestOrphanRemovalKeepsCommittedFiles lands a "long job" commit in the
// middle of an orphan-file removal: the job's data file was written four
// days ago, so the listing takes it for an orphan. A commit landing after
// the listing but before the candidates are recorded is seen by the
// removal's second read, and its file survives; one tried after the
// recording is refused with 409 (nothing committed), and only then is the
// file deleted; one prepared before the removal and sent after it
// finished is refused by the deleted file's tombstone. Either way no
// committed file is lost (issue 46). While the tombstone lasts, an append
// of new files lands (its manifests are read to list them).
func TestOrphanRemovalKeepsCommittedFiles(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		for _, at := range []string{service.OrphanListed, service.OrphanClaimed, orphanAfter} {
			t.Run(at, func(t *testing.T) { orphanRace(t, b, at) })
		}
	})
}

func orphanRace(t *testing.T, b *bundle, at string) {
	ctx := context.Background()
	v2 := catalog.WithProperties(iceberg.Properties{"format-version": "2"})
	name := "t" + at
	tbl := goTable(t, b, "db", name, []int64{1, 2}, v2)
	scratch := goTable(t, b, "db", "scratch"+at, []int64{7, 8, 9}, v2)
	dir := strings.TrimPrefix(tbl.Location(), "file://")
	jobFile := filepath.Join(dir, "data", "long-job.parquet")
	copyDataFile(t, strings.TrimPrefix(scratch.Location(), "file://"), jobFile)
	old := time.Now().Add(-96 * time.Hour)
	require.NoError(t, os.Chtimes(jobFile, old, old))

	var commitErr error
	committed := false
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(ctx, []string{"file://" + jobFile}, nil, false), "the job checks its file first")
	commit := func() {
		_, commitErr = tx.Commit(ctx)
		committed = commitErr == nil
	}
	step := func(s string) {
		if s == at {
			commit()
		}
	}
	id := service.Ident{Namespace: []string{"db"}, Name: name}
	rep, err := b.svc.Maintainer().RemoveOrphanFiles(ctx, "wh", id, service.OrphanOptions{Step: step})
	require.NoError(t, err)
	require.Contains(t, rep.OrphanFiles, "data/long-job.parquet", "the listing took the job's file for an orphan")
	if at == orphanAfter {
		commit()
	}

	loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"db", name})
	require.NoError(t, err)
	out, err := loaded.Scan().ToArrowTable(ctx)
	require.NoError(t, err, "every file the table references is readable")
	defer out.Release()
	obj, err := b.store.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"db"}, Name: name, Kind: store.KindTable})
	require.NoError(t, err)
	rows, err := b.store.ListOrphanCandidates(ctx, obj.ID)
	require.NoError(t, err)
	if at == service.OrphanListed {
		require.NoError(t, commitErr)
		require.FileExists(t, jobFile, "landed before the recording: the second read keeps it")
		require.Equal(t, 1, rep.Spared)
		require.EqualValues(t, 5, out.NumRows())
		require.Empty(t, rows, "released")
		return
	}
	require.False(t, committed)
	require.ErrorIs(t, commitErr, table.ErrCommitFailed, "409: the removal holds the file")
	require.Contains(t, commitErr.Error(), "orphan-file removal")
	require.Contains(t, commitErr.Error(), "long-job.parquet")
	require.NotContains(t, commitErr.Error(), dir, "the file is named by its base name only")
	require.NoFileExists(t, jobFile, "refused, so unreferenced, so deleted")
	require.EqualValues(t, 2, out.NumRows())
	require.Len(t, rows, 1, "the deleted file's tombstone")
	require.Equal(t, store.OrphanDeleted, rows[0].State)
	require.True(t, strings.HasSuffix(rows[0].Location, "/data/long-job.parquet"))

	next, err := loaded.AppendTable(ctx, arrowRows(t, loaded.Schema(), 3), 100, nil)
	require.NoError(t, err, "new files land on a held table")
	out2, err := next.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	defer out2.Release()
	require.EqualValues(t, 3, out2.NumRows())
}

// copyDataFile copies the first data file under the table at src to dst.
func copyDataFile(t *testing.T, src, dst string) {
	t.Helper()
	var found string
	require.NoError(t, filepath.Walk(filepath.Join(src, "data"), func(p string, info os.FileInfo, err error) error {
		if err == nil && found == "" && strings.HasSuffix(p, ".parquet") {
			found = p
		}
		return err
	}))
	require.NotEmpty(t, found)
	data, err := os.ReadFile(found)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, data, 0o644))
}
