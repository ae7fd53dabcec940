package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/v4manifest"
)

// TestReadLeavesInOrder: leaves read several at a time reach the caller in
// order, so a plan over more leaves than are read at once lists its tasks
// as a leaf-by-leaf loop would; the first error in leaf order wins, and no
// leaf after it is handed on.
func TestReadLeavesInOrder(t *testing.T) {
	ctx := context.Background()
	svc, id := newV4TestTable(t, Options{MaxLeafEntries: 1})
	const n = 3*planLeafReads + 1
	adds := make([]DataFileInput, n)
	for i := range adds {
		adds[i] = DataFileInput{Location: fmt.Sprintf("data/f%02d.parquet", i), FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: 100,
			Stats: map[int]*v4manifest.FieldStats{1: {LowerBound: int64(10 * i), UpperBound: int64(10*i + 9)}}}
	}
	_, err := svc.CommitFiles(ctx, "wh", FilesCommit{Ident: id, AddDataFiles: adds})
	require.NoError(t, err)

	newPlan := func() *scanPlanV4 {
		w, err := svc.warehouse(ctx, "wh")
		require.NoError(t, err)
		md, _, err := svc.loadPlanTable(ctx, w, id)
		require.NoError(t, err)
		p, err := svc.newV4Plan(w, id, md, PlanRequest{CaseSensitive: true})
		require.NoError(t, err)
		return p
	}
	p := newPlan()
	units, _, _, err := p.units(ctx)
	require.NoError(t, err)
	require.Len(t, units, n, "one leaf per file")
	leaves := make([]*v4manifest.TrackedFile, len(units))
	var want []string
	for i, u := range units {
		leaves[i] = u.Leaf
		rows, err := svc.readers.Leaf(ctx, p.w, p.st.location, u.Leaf, nil)
		require.NoError(t, err)
		for _, r := range rows {
			want = append(want, r.Location)
		}
	}
	res, err := p.plan(ctx)
	require.NoError(t, err)
	var got []string
	for _, task := range res.Tasks {
		got = append(got, task.Location)
	}
	require.Equal(t, want, got, "tasks in leaf order")
	require.Equal(t, n, p.leavesRead)

	// use fails at leaf 3: that error, and nothing after leaf 3 handed on.
	boom := errors.New("boom")
	last := -1
	err = p.readLeavesInOrder(ctx, leaves, func(i int, _ []v4manifest.TrackedFile) error {
		require.Equal(t, last+1, i)
		last = i
		if i == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 3, last)

	// Leaf 12 is missing: the leaves before it are handed on, then its
	// read error; a use error at an earlier leaf comes first.
	missing := v4manifest.Resolve(p.st.location, leaves[12].Location)
	require.NoError(t, os.Remove(strings.TrimPrefix(missing, "file://")))
	last = -1
	err = p.readLeavesInOrder(ctx, leaves, func(i int, _ []v4manifest.TrackedFile) error {
		last = i
		return nil
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), filepath.Base(missing))
	require.Equal(t, 11, last)
	err = p.readLeavesInOrder(ctx, leaves, func(i int, _ []v4manifest.TrackedFile) error {
		if i == 5 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	_, err = newPlan().plan(ctx)
	require.Error(t, err)
	require.Contains(t, err.Error(), filepath.Base(missing))
}
