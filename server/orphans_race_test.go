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

// TestOrphanRemovalKeepsCommittedFiles lands a "long job" commit in the
// middle of an orphan-file removal: the job's data file was written four
// days ago, so the listing takes it for an orphan. A commit landing after
// the listing but before the candidates are recorded is seen by the
// removal's second read, and its file survives; one tried after the
// recording is refused with 409 (nothing committed), and only then is the
// file deleted. Either way no committed file is lost (issue 46).
func TestOrphanRemovalKeepsCommittedFiles(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		for _, at := range []string{service.OrphanListed, service.OrphanClaimed} {
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
	step := func(s string) {
		if s != at {
			return
		}
		tx := tbl.NewTransaction()
		if commitErr = tx.AddFiles(ctx, []string{"file://" + jobFile}, nil, false); commitErr == nil {
			_, commitErr = tx.Commit(ctx)
		}
		committed = commitErr == nil
	}
	id := service.Ident{Namespace: []string{"db"}, Name: name}
	rep, err := b.svc.RemoveOrphanFiles(ctx, "wh", id, service.OrphanOptions{Step: step})
	require.NoError(t, err)
	require.Contains(t, rep.OrphanFiles, "data/long-job.parquet", "the listing took the job's file for an orphan")

	loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"db", name})
	require.NoError(t, err)
	out, err := loaded.Scan().ToArrowTable(ctx)
	require.NoError(t, err, "every file the table references is readable")
	defer out.Release()
	switch at {
	case service.OrphanListed:
		require.NoError(t, commitErr)
		require.FileExists(t, jobFile, "landed before the recording: the second read keeps it")
		require.Equal(t, 1, rep.Spared)
		require.EqualValues(t, 5, out.NumRows())
	case service.OrphanClaimed:
		require.False(t, committed)
		require.ErrorIs(t, commitErr, table.ErrCommitFailed, "409: the removal holds the file")
		require.Contains(t, commitErr.Error(), "orphan-file removal")
		require.NoFileExists(t, jobFile, "refused, so unreferenced, so deleted")
		require.EqualValues(t, 2, out.NumRows())
	}
	obj, err := b.store.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"db"}, Name: name, Kind: store.KindTable})
	require.NoError(t, err)
	rows, err := b.store.ListOrphanCandidates(ctx, obj.ID)
	require.NoError(t, err)
	require.Empty(t, rows, "released")
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
