package service

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// refWalker collects the files some snapshots of a table reference: the
// manifest lists (v4: roots), manifests (v4: leaves) and the live data,
// delete, column and deletion-vector files they list. Manifests are
// immutable, so each is read once.
type refWalker struct {
	s       *Service
	w       *store.Warehouse
	meta    table.Metadata
	allowed location.Set
	// strict refuses a manifest outside the table instead of skipping it:
	// a reference the walk cannot see must stop an expiry.
	strict bool
	files  map[string]bool
	seen   map[string]bool
	stats  map[int64][]string // statistics files by snapshot, built on first use
}

// referencedFiles returns the files referenced by the snapshots of meta
// that keep selects (all when keep is nil). It fails when a manifest
// cannot be read or lies outside the table: the caller uses the result to
// decide what is safe to delete.
func (s *Service) referencedFiles(ctx context.Context, w *store.Warehouse, meta table.Metadata, version int, keep func(int64) bool) (map[string]bool, error) {
	rw := &refWalker{s: s, w: w, meta: meta, allowed: tablePrefixes(w, meta.Location()), strict: true,
		files: map[string]bool{}, seen: map[string]bool{}}
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
func (s *Service) filesOnlyIn(ctx context.Context, w *store.Warehouse, meta table.Metadata, version int, expire []int64) ([]string, error) {
	kept, err := s.referencedFiles(ctx, w, meta, version, func(id int64) bool { return !slices.Contains(expire, id) })
	if err != nil {
		return nil, err
	}
	rw := &refWalker{s: s, w: w, meta: meta, allowed: tablePrefixes(w, meta.Location()),
		files: map[string]bool{}, seen: map[string]bool{}}
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
			what, fileName(rw.w, rw.meta.Location(), loc))
	}
	return false, nil
}

func (rw *refWalker) add(loc, what string) error {
	ok, err := rw.inside(loc, what)
	if ok {
		rw.files[loc] = true
	}
	return err
}

func (rw *refWalker) snapshot(ctx context.Context, snap table.Snapshot, version int) error {
	rw.statistics(snap.SnapshotID)
	ok, err := rw.inside(snap.ManifestList, "manifest list")
	if !ok || err != nil {
		return err
	}
	rw.files[snap.ManifestList] = true
	if version == FormatV4 && !v4read.LegacyManifestList(snap.ManifestList) {
		return rw.v4Root(ctx, snap.ManifestList)
	}
	return rw.manifests(ctx, snap)
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

// manifests walks a v1–v3 snapshot's manifest list.
func (rw *refWalker) manifests(ctx context.Context, snap table.Snapshot) error {
	fio, err := rw.icebergIO(ctx, snap.ManifestList)
	if err != nil {
		return err
	}
	list, err := snap.Manifests(fio)
	if err != nil {
		return errUnreadable("manifest list", err)
	}
	for _, m := range list {
		ok, err := rw.inside(m.FilePath(), "manifest")
		if err != nil {
			return err
		}
		if !ok || rw.seen[m.FilePath()] {
			continue
		}
		rw.seen[m.FilePath()] = true
		rw.files[m.FilePath()] = true
		if err := rw.manifestEntries(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (rw *refWalker) manifestEntries(ctx context.Context, m iceberg.ManifestFile) error {
	fio, err := rw.icebergIO(ctx, m.FilePath())
	if err != nil {
		return err
	}
	for e, err := range m.Entries(fio, true) {
		if err != nil {
			return errUnreadable("manifest", err)
		}
		if err := rw.add(e.DataFile().FilePath(), "data or delete file"); err != nil {
			return err
		}
	}
	return nil
}

func (rw *refWalker) icebergIO(ctx context.Context, loc string) (icebergio.IO, error) {
	props, err := rw.s.ioProps(ctx, rw.w, loc)
	if err != nil {
		return nil, errUnreadable("manifest", err)
	}
	fio, err := rw.s.files.IcebergIO(ctx, loc, props)
	if err != nil {
		return nil, errUnreadable("manifest", err)
	}
	return fio, nil
}

// v4Root walks a v4 root manifest: its live leaves and the live rows in
// them or in the root itself.
func (rw *refWalker) v4Root(ctx context.Context, root string) error {
	rows, err := rw.s.readers.Manifest(ctx, rw.w, root, rw.meta.Location(), nil, nil)
	if err != nil {
		return errUnreadable("root manifest", err)
	}
	for i := range rows {
		r := &rows[i]
		if !r.Tracking.Status.Live() {
			continue
		}
		if r.ContentType != v4manifest.ContentDataManifest && r.ContentType != v4manifest.ContentDeleteManifest {
			if err := rw.v4Row(r); err != nil {
				return err
			}
			continue
		}
		ok, err := rw.inside(r.Location, "leaf manifest")
		if err != nil {
			return err
		}
		if !ok || rw.seen[r.Location] {
			continue
		}
		rw.seen[r.Location] = true
		rw.files[r.Location] = true
		leaf, err := rw.s.readers.Manifest(ctx, rw.w, r.Location, rw.meta.Location(), r, nil)
		if err != nil {
			return errUnreadable("leaf manifest", err)
		}
		for j := range leaf {
			if leaf[j].Tracking.Status.Live() {
				if err := rw.v4Row(&leaf[j]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// v4Row adds a live v4 file row: the file, its deletion vector and its
// column files.
func (rw *refWalker) v4Row(r *v4manifest.TrackedFile) error {
	if err := rw.add(r.Location, "data or delete file"); err != nil {
		return err
	}
	if r.DeletionVector != nil {
		if err := rw.add(r.DeletionVector.Location, "deletion vector"); err != nil {
			return err
		}
	}
	for _, cf := range r.ColumnFiles {
		if err := rw.add(cf.Location, "column file"); err != nil {
			return err
		}
	}
	return nil
}
