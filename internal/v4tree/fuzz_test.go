package v4tree

import (
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"testing"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// FuzzCommitFiles builds a tree of leaves from the inputs, removes and sets
// deletion vectors on files picked by the masks, adds files, and checks the
// rewritten tree: every file live exactly once, removed files gone, the
// others kept with their deletion vectors, only touched leaves rewritten,
// and the summary agreeing with the tree.
func FuzzCommitFiles(f *testing.F) {
	f.Add(uint8(3), uint8(2), uint64(0b10), uint64(0b100), uint8(3), uint8(2), false)
	f.Add(uint8(0), uint8(0), uint64(0), uint64(0), uint8(1), uint8(0), false)
	f.Add(uint8(5), uint8(7), uint64(1<<40-1), uint64(0), uint8(0), uint8(1), false)
	f.Add(uint8(2), uint8(2), uint64(1), uint64(1), uint8(0), uint8(0), true)
	f.Fuzz(func(t *testing.T, nLeaves, perLeaf uint8, removeMask, dvMask uint64, nAdded, maxLeaf uint8, unknown bool) {
		ft := buildFuzzTree(nLeaves%8, perLeaf%9, removeMask, dvMask)
		tr, root, in, before, removed, touched := ft.tr, ft.root, ft.in, ft.before, ft.removed, ft.touched
		in.FirstRowID, in.MaxLeafEntries = 100, int(maxLeaf%5)
		if unknown {
			in.Remove = append(in.Remove, loc("not-there"))
		}
		var addedRecords int64
		for i := 0; i < int(nAdded%20); i++ {
			in.Added = append(in.Added, data(fmt.Sprintf("new%d", i), int64(i)))
			addedRecords += int64(i)
		}
		res, err := CommitFiles(root, tr.read, newSnap(), in)
		if unknown {
			var ve *validation.Error
			if !errors.As(err, &ve) || ve.Reason != validation.ReasonUnknownDataFile {
				t.Fatalf("unknown file: got %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		live := liveFiles(t, tr, res)
		if want := len(before) - len(removed) + len(in.Added); len(live) != want {
			t.Fatalf("%d live files, want %d", len(live), want)
		}
		for loc := range before {
			r, ok := live[loc]
			if ok == removed[loc] {
				t.Fatalf("%s: live %v, removed %v", loc, ok, removed[loc])
			}
			if dv, set := in.DeletionVectors[loc]; set && (r.DeletionVector == nil || r.DeletionVector.Cardinality != dv.Cardinality) {
				t.Fatalf("%s lost its deletion vector", loc)
			}
		}
		chunk := in.MaxLeafEntries
		if chunk == 0 {
			chunk = max(len(in.Added), 1)
		}
		addedLeaves := (len(in.Added) + chunk - 1) / chunk
		if len(res.Leaves) != touched+addedLeaves {
			t.Fatalf("%d new leaves, want %d rewritten + %d added", len(res.Leaves), touched, addedLeaves)
		}
		if len(res.Root) != len(root)+touched+addedLeaves {
			t.Fatalf("%d root rows, want %d", len(res.Root), len(root)+touched+addedLeaves)
		}
		for _, l := range res.Leaves {
			mi := v4manifest.ComputeManifestInfo(l.Rows)
			if got := res.Root[l.RootIndex].ManifestInfo; got == nil || got.AddedFiles != mi.AddedFiles || got.DeletedFiles != mi.DeletedFiles {
				t.Fatalf("leaf %s: manifest info %+v, want %+v", l.Location, got, mi)
			}
		}
		counter := func(k string) string {
			if v, ok := res.Summary[k]; ok {
				return v
			}
			return "0" // counters that are zero are left out
		}
		if counter("deleted-data-files") != strconv.Itoa(len(removed)) || counter("added-records") != strconv.FormatInt(addedRecords, 10) ||
			res.Summary["changed-deletion-vectors"] != strconv.Itoa(len(in.DeletionVectors)) {
			t.Fatalf("summary %v", res.Summary)
		}
	})
}

// fuzzTree is a generated tree and files change: in removes the files picked
// by removeMask and sets deletion vectors on those picked by dvMask.
type fuzzTree struct {
	tr      *tree
	root    []v4manifest.TrackedFile
	in      Files
	before  map[string]bool // every file of the tree
	removed map[string]bool
	touched int // leaves holding a file the change affects
}

func buildFuzzTree(nLeaves, perLeaf uint8, removeMask, dvMask uint64) *fuzzTree {
	ft := &fuzzTree{tr: newTree(), before: map[string]bool{}, removed: map[string]bool{},
		in: Files{DeletionVectors: map[string]v4manifest.DeletionVector{}}}
	for l := 0; l < int(nLeaves); l++ {
		var rows []v4manifest.TrackedFile
		hit := false
		for i := 0; i < int(perLeaf); i++ {
			bit := uint(l*int(perLeaf)+i) % 64
			r := data(fmt.Sprintf("l%d-%d", l, i), int64(i+1))
			rows = append(rows, r)
			ft.before[r.Location] = true
			switch {
			case removeMask&(1<<bit) != 0:
				ft.in.Remove = append(ft.in.Remove, r.Location)
				ft.removed[r.Location] = true
				hit = true
			case dvMask&(1<<bit) != 0:
				ft.in.DeletionVectors[r.Location] = v4manifest.DeletionVector{Location: loc("dv"), SizeInBytes: 1, Cardinality: int64(i)}
				hit = true
			}
		}
		if hit {
			ft.touched++
		}
		ft.root = append(ft.root, ft.tr.addLeaf(fmt.Sprintf("leaf%d", l), v4manifest.ContentDataManifest, rows...))
	}
	return ft
}

// FuzzColumnsThenFiles applies two column commits (the bases picked by
// colMask, then some of those and others: their leaves masked, MODIFIED
// rows in the root or, past maxRootData, a new leaf), then a files
// commit removing the files picked by removeMask on the resulting tree,
// and checks both trees: every file live exactly once, updated bases live
// with their column file, removed files gone, masked rows never back.
func FuzzColumnsThenFiles(f *testing.F) {
	f.Add(uint8(3), uint8(3), uint64(0b101), uint64(0b10))
	f.Add(uint8(1), uint8(2), uint64(0b11), uint64(0b1))
	f.Add(uint8(4), uint8(5), uint64(1<<20-1), uint64(1<<19))
	f.Fuzz(func(t *testing.T, nLeaves, perLeaf uint8, colMask, removeMask uint64) {
		ft := buildFuzzTree(nLeaves%12+1, perLeaf%6+1, 0, 0)
		tr, root := ft.tr, ft.root
		updated := map[string]int{} // column files per updated file
		records := map[string]int64{}
		for _, rows := range tr.leaves {
			for _, r := range rows {
				records[r.Location] = r.RecordCount
			}
		}
		// Two column commits: the second updates some files the first left
		// in the root itself and some still in leaves.
		for round, mask := range []uint64{colMask, bits.RotateLeft64(colMask, 3) & (colMask | colMask>>1)} {
			var files []validation.ColumnFile
			bit := uint(0)
			for _, l := range slices.Sorted(maps.Keys(ft.before)) {
				if mask&(1<<(bit%64)) != 0 {
					files = append(files, validation.ColumnFile{DataFile: l, Location: loc(fmt.Sprintf("cf%d-%s", round, l[len(tableLoc+"/data/"):])),
						FileFormat: "parquet", FieldIDs: []int{round + 1}, RecordCount: records[l], FileSizeInBytes: 1})
					updated[l]++
				}
				bit++
			}
			if len(files) == 0 {
				continue
			}
			snap := newSnap()
			snap.ID, snap.SequenceNumber = int64(90+round), int64(5+round)
			k := 0
			snap.LeafLocation = func() string { k++; return fmt.Sprintf("%s/metadata/round%d-%d.parquet", tableLoc, round, k) }
			res, err := CommitColumns(root, tr.read, snap, columnsFor(t, tr, root, files))
			if err != nil {
				t.Fatal(err)
			}
			live := liveFiles(t, tr, res)
			if len(live) != len(ft.before) {
				t.Fatalf("%d live files after column commit %d, want %d", len(live), round, len(ft.before))
			}
			for l, n := range updated {
				if r := live[l]; r.Tracking.Status.Live() && len(r.ColumnFiles) != n {
					t.Fatalf("%s: %v with %d column files after %d updates", l, r.Tracking.Status, len(r.ColumnFiles), n)
				}
			}
			for _, l := range res.Leaves {
				tr.leaves[l.Location] = l.Rows
			}
			root = nil
			for _, rr := range res.Root {
				if rr.Tracking.Status.Live() {
					root = append(root, rr)
				}
			}
		}
		var in Files
		removed := map[string]bool{}
		bit := uint(0)
		for _, l := range slices.Sorted(maps.Keys(ft.before)) {
			if removeMask&(1<<(bit%64)) != 0 {
				in.Remove = append(in.Remove, l)
				removed[l] = true
			}
			bit++
		}
		snap := newSnap()
		snap.ID, snap.SequenceNumber = 100, 8
		n := 0
		snap.LeafLocation = func() string { n++; return fmt.Sprintf("%s/metadata/second-%d.parquet", tableLoc, n) }
		res, err := CommitFiles(root, tr.read, snap, in)
		if err != nil {
			t.Fatal(err)
		}
		live := liveFiles(t, tr, res)
		if len(live) != len(ft.before)-len(removed) {
			t.Fatalf("%d live files after the removal, want %d", len(live), len(ft.before)-len(removed))
		}
		for l := range ft.before {
			r, ok := live[l]
			if ok == removed[l] {
				t.Fatalf("%s: live %v, removed %v", l, ok, removed[l])
			}
			if ok && len(r.ColumnFiles) != updated[l] {
				t.Fatalf("%s has %d column files, want %d", l, len(r.ColumnFiles), updated[l])
			}
		}
	})
}
