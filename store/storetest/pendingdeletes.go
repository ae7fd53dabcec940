package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// testPendingDeletes: the expiry clean-up queue keeps rows per table,
// replaces a re-queued location, lists oldest first, and removes only the
// named rows, in batches larger than one statement's.
func testPendingDeletes(t *testing.T, s store.Store) {
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000)
	var rows []store.PendingDelete
	for i := range 1200 {
		rows = append(rows, store.PendingDelete{TableUUID: "t1", Location: fmt.Sprintf("s3://b/t1/data/%04d.parquet", i),
			SnapshotIDs: []int64{1, 2}, CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	require.NoError(t, s.AddPendingDeletes(ctx, rows))
	require.NoError(t, s.AddPendingDeletes(ctx, []store.PendingDelete{
		{TableUUID: "t2", Location: "s3://b/t2/x", SnapshotIDs: []int64{9}, CreatedAt: t0},
		{TableUUID: "t1", Location: rows[0].Location, SnapshotIDs: []int64{3}, CreatedAt: t0.Add(time.Hour)},
	}))
	got, err := s.ListPendingDeletes(ctx, "t1")
	require.NoError(t, err)
	require.Len(t, got, 1200)
	require.Equal(t, rows[1].Location, got[0].Location, "oldest first")
	last := got[len(got)-1]
	require.Equal(t, rows[0].Location, last.Location, "a re-queued row takes the new time")
	require.Equal(t, []int64{3}, last.SnapshotIDs)
	require.Equal(t, []int64{1, 2}, got[0].SnapshotIDs)

	var drop []string
	for _, r := range got[:1100] {
		drop = append(drop, r.Location)
	}
	require.NoError(t, s.RemovePendingDeletes(ctx, "t1", append(drop, "s3://b/t1/never-queued")))
	got, err = s.ListPendingDeletes(ctx, "t1")
	require.NoError(t, err)
	require.Len(t, got, 100)
	other, err := s.ListPendingDeletes(ctx, "t2")
	require.NoError(t, err)
	require.Len(t, other, 1, "another table's rows are untouched")
	require.NoError(t, s.RemovePendingDeletes(ctx, "t2", []string{"s3://b/t2/x"}))
	other, err = s.ListPendingDeletes(ctx, "t2")
	require.NoError(t, err)
	require.Empty(t, other)
}
