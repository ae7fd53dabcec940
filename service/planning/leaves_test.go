package planning_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/v4manifest"
)

// TestReadLeavesInOrder: leaves read several at a time reach the caller in
// order, so a plan over more leaves than are read at once lists its tasks
// as a leaf-by-leaf loop would; the first error in leaf order wins, and no
// leaf after it is handed on.
func TestReadLeavesInOrder(t *testing.T) {
	ctx := context.Background()
	fx := newV4Fixture(t, service.Options{MaxLeafEntries: 1}, "t",
		[]byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`), nil)
	const n = 3*planning.PlanLeafReads + 1
	adds := make([]service.DataFileInput, n)
	for i := range adds {
		adds[i] = service.DataFileInput{Location: fmt.Sprintf("data/f%02d.parquet", i), FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: 100,
			Stats: map[int]*v4manifest.FieldStats{1: {LowerBound: int64(10 * i), UpperBound: int64(10*i + 9)}}}
	}
	_, err := fx.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: adds})
	require.NoError(t, err)

	newPlan := func() *planning.V4Plan {
		p, err := fx.pl.NewV4Plan(ctx, fx.w, fx.id, planning.Request{CaseSensitive: true})
		require.NoError(t, err)
		return p
	}
	p := newPlan()
	leaves, err := p.Leaves(ctx)
	require.NoError(t, err)
	require.Len(t, leaves, n, "one leaf per file")
	var want []string
	for _, leaf := range leaves {
		rows, err := p.ReadLeaf(ctx, leaf)
		require.NoError(t, err)
		for _, r := range rows {
			want = append(want, r.Location)
		}
	}
	res, err := p.Plan(ctx)
	require.NoError(t, err)
	var got []string
	for _, task := range res.Tasks {
		got = append(got, task.Location)
	}
	require.Equal(t, want, got, "tasks in leaf order")
	require.Equal(t, n, p.LeavesRead())

	// use fails at leaf 3: that error, and nothing after leaf 3 handed on.
	boom := errors.New("boom")
	last := -1
	err = p.ReadLeavesInOrder(ctx, leaves, func(i int, _ []v4manifest.TrackedFile) error {
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
	missing := v4manifest.Resolve(p.Location(), leaves[12].Location)
	require.NoError(t, os.Remove(strings.TrimPrefix(missing, "file://")))
	last = -1
	err = p.ReadLeavesInOrder(ctx, leaves, func(i int, _ []v4manifest.TrackedFile) error {
		last = i
		return nil
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), filepath.Base(missing))
	require.Equal(t, 11, last)
	err = p.ReadLeavesInOrder(ctx, leaves, func(i int, _ []v4manifest.TrackedFile) error {
		if i == 5 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	_, err = newPlan().Plan(ctx)
	require.Error(t, err)
	require.Contains(t, err.Error(), filepath.Base(missing))
}
