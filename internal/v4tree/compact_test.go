package v4tree

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// compactTree is a tree with base a (first row id 10, data sequence 5, a
// column file and a DV of 2 rows) and b, in one leaf, plus leaf c alone.
func compactTree() (*tree, []v4manifest.TrackedFile) {
	tr := newTree()
	a := data("a.parquet", 10)
	a.Tracking.FirstRowID, a.Tracking.SequenceNumber = ptrTo(int64(10)), ptrTo(int64(5))
	a.Tracking.LatestColumnFileSnapshotID = ptrTo(int64(4))
	a.ColumnFiles = []v4manifest.ColumnFile{{Location: loc("a-s.parquet"), FieldIDs: []int32{2}}}
	a.DeletionVector = &v4manifest.DeletionVector{Location: loc("a.puffin"), Offset: 4, SizeInBytes: 40, Cardinality: 2}
	root := []v4manifest.TrackedFile{
		tr.addLeaf("l1.parquet", v4manifest.ContentDataManifest, a, data("b.parquet", 3)),
		tr.addLeaf("l2.parquet", v4manifest.ContentDataManifest, data("c.parquet", 3)),
	}
	return tr, root
}

func foldA(records int64) Fold {
	return Fold{Base: loc("a.parquet"), ColumnFiles: []string{loc("a-s.parquet")},
		DeletionVector: &v4manifest.DeletionVector{Location: loc("a.puffin"), Offset: 4, SizeInBytes: 40, Cardinality: 2},
		New:            v4manifest.TrackedFile{Location: loc("a2.parquet"), RecordCount: records, FileSizeInBytes: 50}}
}

func TestCommitCompaction(t *testing.T) {
	tr, root := compactTree()
	res, err := CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: []Fold{foldA(8)}})
	require.NoError(t, err)
	require.Equal(t, table.OpReplace, res.Operation)
	require.Zero(t, res.AddedRows, "no new row ids")
	live := liveFiles(t, tr, res)
	require.NotContains(t, live, loc("a.parquet"))
	require.Contains(t, live, loc("b.parquet"))
	require.Contains(t, live, loc("c.parquet"))
	n := live[loc("a2.parquet")]
	require.Equal(t, v4manifest.StatusAdded, n.Tracking.Status)
	require.Equal(t, int64(10), *n.Tracking.FirstRowID, "first_row_id kept")
	require.Equal(t, int64(5), *n.Tracking.SequenceNumber, "data sequence number kept")
	require.Equal(t, int64(7), *n.Tracking.FileSequenceNumber)
	require.Nil(t, n.ColumnFiles)
	require.Nil(t, n.DeletionVector)
	require.Nil(t, n.Tracking.LatestColumnFileSnapshotID)
	require.Equal(t, int64(8), n.RecordCount)
	// l1 rewritten (a DELETED, b carried), l2 carried as is, one new leaf
	require.Len(t, res.Leaves, 2)
	require.Equal(t, root[0].Location, res.Leaves[0].Parent)
	require.Equal(t, []v4manifest.Status{v4manifest.StatusDeleted, v4manifest.StatusExisting}, statuses(res.Leaves[0].Rows))
	require.Equal(t, "", res.Leaves[1].Parent)
	require.Equal(t, "1", res.Summary["retired-column-files"])
	require.Equal(t, "1", res.Summary["removed-deletion-vectors"])
	require.Equal(t, "10", res.Summary["deleted-records"])
	require.Equal(t, "8", res.Summary["added-records"])
}

// TestCommitCompactionReadsOnlyIndexedLeaves: with Leaves set, leaves
// outside it are carried without being read.
func TestCommitCompactionReadsOnlyIndexedLeaves(t *testing.T) {
	tr, root := compactTree()
	res, err := CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: []Fold{foldA(8)}, Leaves: map[int]bool{0: true}})
	require.NoError(t, err)
	require.Equal(t, []string{root[0].Location}, tr.reads)
	require.Contains(t, liveFiles(t, tr, res), loc("c.parquet"))
}

func TestCommitCompactionRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Fold)
		check func(*testing.T, error)
	}{
		{"column-files-changed", func(f *Fold) { f.ColumnFiles = nil }, isConflict},
		{"dv-changed", func(f *Fold) { f.DeletionVector.Offset = 5 }, isConflict},
		{"dv-added-meanwhile", func(f *Fold) { f.DeletionVector = nil }, isConflict},
		{"row-count", func(f *Fold) { f.New.RecordCount = 10 }, reason(validation.ReasonRecordCountMismatch)},
		{"unknown-base", func(f *Fold) { f.Base = loc("zzz.parquet") }, reason(validation.ReasonUnknownDataFile)},
		{"new-file-already-live", func(f *Fold) { f.New.Location = loc("c.parquet") }, isRequestError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, root := compactTree()
			f := foldA(8)
			tc.edit(&f)
			_, err := CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: []Fold{f}})
			tc.check(t, err)
		})
	}
	t.Run("read-error", func(t *testing.T) {
		tr, root := compactTree()
		tr.fail = errRead
		_, err := CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: []Fold{foldA(8)}})
		require.ErrorIs(t, err, errRead)
	})
	t.Run("named-twice", func(t *testing.T) {
		tr, root := compactTree()
		_, err := CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: []Fold{foldA(8), foldA(8)}})
		isRequestError(t, err)
	})
}

func isConflict(t *testing.T, err error) {
	var ce *ConflictError
	require.True(t, errors.As(err, &ce), "%v", err)
}

func isRequestError(t *testing.T, err error) {
	var re *RequestError
	require.True(t, errors.As(err, &re), "%v", err)
}

func reason(r string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		var ve *validation.Error
		require.True(t, errors.As(err, &ve), "%v", err)
		require.Equal(t, r, ve.Reason)
	}
}
