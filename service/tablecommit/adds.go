package tablecommit

import (
	"context"
	"errors"
	"path"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/store"
)

// listAdds is commitengine.Attempt.ListAdds for swaps staged, in order,
// from sts: the engine calls it only when an orphan-file removal holds a
// table (store.Swap.AddsListed), so an unheld table's commit reads no
// manifest here.
func (tc *Committer) listAdds(w *store.Warehouse, sts []*staged) func(context.Context, int) ([]string, error) {
	return func(ctx context.Context, i int) ([]string, error) {
		return tc.addedFiles(ctx, w, sts[i])
	}
}

// addedFiles lists, normalized, the files st's new metadata references
// that its base did not, as far as a commit through this route can add
// them: each new snapshot's manifest list, its manifests, and the data
// and delete files its manifests list as ADDED (read only in the
// manifests the snapshot wrote, or that come from no snapshot the base
// knows: the others the table already references), and new statistics
// files. Errors: 409 when one of these files is missing (nothing is
// committed: the commit names a file that is not there), 503 when it
// cannot be read.
func (tc *Committer) addedFiles(ctx context.Context, w *store.Warehouse, st *staged) ([]string, error) {
	known := map[int64]bool{}
	for _, s := range st.base.Snapshots() {
		known[s.SnapshotID] = true
	}
	var out []string
	for _, s := range st.meta.Snapshots() {
		if known[s.SnapshotID] {
			continue
		}
		files, err := tc.snapshotAdds(ctx, w, s, known)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	for sf := range st.meta.Statistics() {
		out = append(out, sf.StatisticsPath)
	}
	for sf := range st.meta.PartitionStatistics() {
		out = append(out, sf.StatisticsPath)
	}
	return normalizedSet(out), nil
}

// snapshotAdds lists snap's manifest list, manifests and the files added
// in the manifests it wrote (or of unknown origin).
func (tc *Committer) snapshotAdds(ctx context.Context, w *store.Warehouse, snap table.Snapshot, known map[int64]bool) ([]string, error) {
	out := []string{snap.ManifestList}
	fio := &ctxIO{ctx: ctx, open: func(ctx context.Context, loc string) (storage.FileIO, error) { return tc.d.Tables.FileIO(ctx, w, loc) }}
	list, err := snap.Manifests(fio)
	if err != nil {
		return nil, unreadable(err, snap.ManifestList)
	}
	for _, m := range list {
		out = append(out, m.FilePath())
		if m.SnapshotID() != snap.SnapshotID && known[m.SnapshotID()] {
			continue
		}
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, unreadable(err, m.FilePath())
			}
			if e.Status() == iceberg.EntryStatusADDED {
				out = append(out, e.DataFile().FilePath())
			}
		}
	}
	return out, nil
}

// unreadable is the error of a manifest list or manifest of the commit
// that cannot be read, naming it by its last path element only.
func unreadable(err error, loc string) error {
	if errors.Is(err, storage.ErrNotExist) {
		return fault.Wrap(fault.CommitFailed, err, "Commit failed: %s, which this commit adds, does not exist (an orphan-file removal may have deleted it); nothing was committed", path.Base(loc))
	}
	return fault.Wrap(fault.Unavailable, err, "Cannot read %s, which this commit adds, to check it against an orphan-file removal of the table; nothing was committed, retry later", path.Base(loc))
}

// normalizedSet is locs normalized, without repeats; a location that does
// not normalize cannot be an orphan-file candidate and is left out.
func normalizedSet(locs []string) []string {
	seen := make(map[string]bool, len(locs))
	out := make([]string, 0, len(locs))
	for _, l := range locs {
		key, err := storagepath.Normalize(l)
		if err != nil || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, key)
	}
	return out
}

// ctxIO is an iceberg-go IO reading through the catalog's storage with a
// request's context, for iceberg-go's manifest readers. It only reads.
type ctxIO struct {
	ctx  context.Context
	open func(ctx context.Context, loc string) (storage.FileIO, error)
}

// Open opens loc for reading; the storage's error when it cannot.
func (c *ctxIO) Open(loc string) (icebergio.File, error) {
	f, err := c.open(c.ctx, loc)
	if err != nil {
		return nil, err
	}
	return f.Open(c.ctx, loc)
}

// Remove always fails: listing a commit's files deletes nothing.
func (c *ctxIO) Remove(string) error { return errors.ErrUnsupported }
