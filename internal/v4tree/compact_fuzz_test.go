package v4tree

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// FuzzCommitCompaction folds the files picked by a mask out of a tree of
// leaves, with the deletion vectors and row counts the inputs choose, and
// checks the rewritten tree: a refusal for a mismatched count or DV, else
// every folded base gone, its new file live once with the base's
// first_row_id, every other file kept, and no row ids assigned.
func FuzzCommitCompaction(f *testing.F) {
	f.Add(uint8(3), uint8(2), uint64(0b101), uint64(0b1), uint8(0), false)
	f.Add(uint8(1), uint8(1), uint64(1), uint64(0), uint8(1), true)
	f.Add(uint8(0), uint8(0), uint64(0), uint64(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, nLeaves, perLeaf uint8, foldMask, dvMask uint64, countSkew uint8, staleDV bool) {
		nLeaves, perLeaf = nLeaves%6, perLeaf%7
		tr := newTree()
		var root []v4manifest.TrackedFile
		var folds []Fold
		before := map[string]int64{}
		for l := 0; l < int(nLeaves); l++ {
			var rows []v4manifest.TrackedFile
			for i := 0; i < int(perLeaf); i++ {
				bit := uint(l*int(perLeaf)+i) % 64
				r := data(fmt.Sprintf("l%d-%d", l, i), int64(i+3))
				r.Tracking.FirstRowID = ptrTo(int64(1000 * (l*int(perLeaf) + i)))
				var dv *v4manifest.DeletionVector
				if dvMask&(1<<bit) != 0 {
					dv = &v4manifest.DeletionVector{Location: r.Location + ".puffin", Offset: 4, SizeInBytes: 10, Cardinality: 2}
					r.DeletionVector = dv
				}
				rows = append(rows, r)
				before[r.Location] = *r.Tracking.FirstRowID
				if foldMask&(1<<bit) != 0 {
					read := dv
					if staleDV && len(folds) == 0 {
						read = nil
						if dv == nil {
							read = &v4manifest.DeletionVector{Location: "x", Offset: 1, SizeInBytes: 1}
						}
					}
					n := r.RecordCount
					if dv != nil {
						n -= dv.Cardinality
					}
					if len(folds) == 0 {
						n += int64(countSkew % 2)
					}
					folds = append(folds, Fold{Base: r.Location, DeletionVector: read,
						New: v4manifest.TrackedFile{Location: r.Location + "-folded", RecordCount: n, FileSizeInBytes: 1}})
				}
			}
			root = append(root, tr.addLeaf(fmt.Sprintf("leaf%d", l), v4manifest.ContentDataManifest, rows...))
		}
		if len(folds) == 0 {
			return
		}
		res, err := CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: folds})
		var ce *ConflictError
		var ve *validation.Error
		switch {
		case staleDV && errors.As(err, &ce), countSkew%2 == 1 && errors.As(err, &ve):
			return
		case err != nil:
			t.Fatalf("unexpected error: %v", err)
		case staleDV || countSkew%2 == 1:
			t.Fatal("a stale DV or a wrong count was accepted")
		}
		if res.AddedRows != 0 {
			t.Fatalf("compaction assigned %d row ids", res.AddedRows)
		}
		live := liveFiles(t, tr, res)
		for _, fo := range folds {
			if _, ok := live[fo.Base]; ok {
				t.Fatalf("%s still live", fo.Base)
			}
			n, ok := live[fo.New.Location]
			if !ok || *n.Tracking.FirstRowID != before[fo.Base] {
				t.Fatalf("%s missing or renumbered", fo.New.Location)
			}
			delete(before, fo.Base)
		}
		if len(live) != len(before)+len(folds) {
			t.Fatalf("%d live files, want %d", len(live), len(before)+len(folds))
		}
	})
}
