package maintenance

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tablefiles"
	"github.com/lakehold/catalog/store"
)

// refWalker collects the files some snapshots of a table reference (what
// tablefiles.Walker visits, inside the table) and the statistics files
// the table metadata lists for them.
type refWalker struct {
	m       *Maintainer
	w       *store.Warehouse
	meta    table.Metadata
	allowed storagepath.Set
	// strict refuses a manifest outside the table instead of skipping it:
	// a reference the walk cannot see must stop an expiry.
	strict bool
	files  map[string]bool
	stats  map[int64][]string // statistics files by snapshot, built on first use
	walk   tablefiles.Walker
}

// newRefWalker returns a walk of meta's snapshots; each manifest is read
// once, whatever the number of snapshots that share it.
func (m *Maintainer) newRefWalker(w *store.Warehouse, meta table.Metadata, strict bool) *refWalker {
	rw := &refWalker{m: m, w: w, meta: meta, allowed: locations.TablePrefixes(w, meta.Location()), strict: strict, files: map[string]bool{}}
	rw.walk = m.fileWalker(w, meta.Location(), tablefiles.Walker{
		Visit: func(r tablefiles.Ref) (bool, error) { return rw.add(r.Location, r.What) },
		Unreadable: func(what, _ string, err error) error {
			return errUnreadable(what, err)
		},
	})
	return rw
}

// referencedFiles returns the files referenced by the snapshots of meta
// that keep selects (all when keep is nil). It fails when a manifest
// cannot be read or lies outside the table: the caller uses the result to
// decide what is safe to delete.
func (m *Maintainer) referencedFiles(ctx context.Context, w *store.Warehouse, meta table.Metadata, version int, keep func(int64) bool) (map[string]bool, error) {
	rw := m.newRefWalker(w, meta, true)
	for _, snap := range meta.Snapshots() {
		if keep != nil && !keep(snap.SnapshotID) {
			continue
		}
		if err := rw.snapshot(ctx, snap, version); err != nil {
			return nil, err
		}
	}
	return rw.files, nil
}

// filesOnlyIn returns, sorted, the files inside the table that the
// snapshots in expire reference and no other snapshot does.
func (m *Maintainer) filesOnlyIn(ctx context.Context, w *store.Warehouse, meta table.Metadata, version int, expire []int64) ([]string, error) {
	kept, err := m.referencedFiles(ctx, w, meta, version, func(id int64) bool { return !slices.Contains(expire, id) })
	if err != nil {
		return nil, err
	}
	rw := m.newRefWalker(w, meta, false)
	for _, id := range expire {
		if snap := meta.SnapshotByID(id); snap != nil {
			if err := rw.snapshot(ctx, *snap, version); err != nil {
				return nil, err
			}
		}
	}
	var out []string
	for f := range rw.files {
		if !kept[f] {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out, nil
}

// inside reports whether loc may be read or deleted; outside the table a
// strict walk fails and a lenient one skips it.
func (rw *refWalker) inside(loc, what string) (bool, error) {
	if loc == "" {
		return false, nil
	}
	if rw.allowed.Contains(loc) {
		return true, nil
	}
	if rw.strict {
		return false, fault.New(fault.BadRequest, "Cannot expire snapshots: a remaining snapshot references a %s outside the table (%s)",
			what, locations.FileName(rw.w, rw.meta.Location(), loc))
	}
	return false, nil
}

// add records loc when it lies inside the table and reports whether it
// does.
func (rw *refWalker) add(loc, what string) (bool, error) {
	ok, err := rw.inside(loc, what)
	if ok {
		rw.files[loc] = true
	}
	return ok, err
}

// snapshot adds what snap references: its statistics files and its tree.
func (rw *refWalker) snapshot(ctx context.Context, snap table.Snapshot, version int) error {
	rw.statistics(snap.SnapshotID)
	return rw.walk.Snapshot(ctx, snap, version)
}

// statistics adds the statistics and partition-statistics files of
// snapshot id (table metadata lists them by snapshot; expiry drops the
// entries of the snapshots it removes, so their files go with them). A
// file outside the table is skipped, whatever the walk: it is never
// deleted, so it cannot make a kept reference unsafe.
func (rw *refWalker) statistics(id int64) {
	if rw.stats == nil {
		rw.stats = map[int64][]string{}
		for st := range rw.meta.Statistics() {
			rw.stats[st.SnapshotID] = append(rw.stats[st.SnapshotID], st.StatisticsPath)
		}
		for ps := range rw.meta.PartitionStatistics() {
			rw.stats[ps.SnapshotID] = append(rw.stats[ps.SnapshotID], ps.StatisticsPath)
		}
	}
	for _, loc := range rw.stats[id] {
		if loc != "" && rw.allowed.Contains(loc) {
			rw.files[loc] = true
		}
	}
}
