package maintenance

import (
	"context"
	"sort"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// DefaultOrphanAge is how old a file must be before orphan removal may
// delete it, as Java's DeleteOrphanFiles: a younger file may belong to a
// commit still being written.
const DefaultOrphanAge = 72 * time.Hour

// MinOrphanAge is the shortest window a caller may ask for.
const MinOrphanAge = time.Hour

// OrphanOptions tunes RemoveOrphanFiles.
type OrphanOptions struct {
	// OlderThan: only files last modified before it (zero: now minus
	// DefaultOrphanAge; at most now minus MinOrphanAge).
	OlderThan time.Time
	// DryRun reports and deletes nothing.
	DryRun bool
	// Step, when set, is called as the run passes OrphanListed and
	// OrphanClaimed, so that a test can land a commit in between.
	Step func(step string)
}

// The steps of a run that OrphanOptions.Step reports.
const (
	// OrphanListed: the location is listed and the candidates chosen,
	// nothing recorded yet.
	OrphanListed = "listed"
	// OrphanClaimed: the candidates are recorded; the table's metadata is
	// about to be read again.
	OrphanClaimed = "claimed"
)

// OrphanReport is what an orphan removal found and did. Files are named
// relative to the table location.
type OrphanReport struct {
	OrphanFiles []string
	Listed      int
	// Spared counts the orphans of the listing that were not deleted:
	// referenced by the table's metadata read after they were recorded
	// (a commit landed meanwhile), or held by another run.
	Spared  int
	Deleted int
	Failed  int
	DryRun  bool
}

// RemoveOrphanFiles lists the files under the table's location (never
// following links, never outside it) and deletes those older than the
// window that nothing references: no snapshot (its manifest list, its
// manifests and what they list, v4 leaves, column files and deletion
// vectors), no metadata file or metadata-log entry, no statistics file and
// no queued expiry delete. It needs what Deps.Authorize checks
// (table-write-data and table-write-metadata; its error is returned); 404
// for an unknown table, 400 for an invalid identifier, a window shorter
// than MinOrphanAge or a table that references files outside its
// prefixes (which listing cannot tell from its own) and 503 when a
// manifest cannot be read or the listing fails: in both cases nothing is
// deleted. A table with
// gc.enabled=false (its files may be shared with other tables) gets a dry
// run only: otherwise 400 ValidationException, as Java refuses, except
// for the scheduled remove-orphan-files job, which is logged and given an
// empty report.
func (m *Maintainer) RemoveOrphanFiles(ctx context.Context, warehouse string, id ident.Ident, opt OrphanOptions) (*OrphanReport, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := m.authorizeWrite(ctx, warehouse, id); err != nil {
		return nil, err
	}
	now := m.d.Tables.Now()
	if opt.OlderThan.IsZero() {
		opt.OlderThan = now.Add(-DefaultOrphanAge)
	}
	if opt.OlderThan.After(now.Add(-MinOrphanAge)) {
		return nil, fault.New(fault.BadRequest, "older-than must be at least %s ago: a younger file may belong to a commit still being written", MinOrphanAge)
	}
	w, err := m.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	obj, e, err := m.d.Tables.ReadTable(ctx, warehouse, id)
	if err != nil {
		return nil, err
	}
	if !opt.DryRun && GCDisabled(e.Meta.Properties()) {
		return nil, fault.New(fault.Validation, "Cannot remove orphan files: GC is disabled (deleting files may corrupt other tables); "+
			"the table has gc.enabled=false")
	}
	live, err := m.liveFiles(ctx, w, obj, e.Meta, e.Version, id)
	if err != nil {
		return nil, err
	}
	rep := &OrphanReport{DryRun: opt.DryRun, OrphanFiles: []string{}}
	allowed := locations.TablePrefixes(w, obj.Location)
	var orphans []string
	props, err := m.d.Tables.IOProps(ctx, w, obj.Location)
	if err != nil {
		return nil, err
	}
	err = m.d.Tables.Files().Walk(ctx, obj.Location, props, func(f storage.Listed) error {
		rep.Listed++
		key, err := storagepath.Normalize(f.Location)
		if err != nil || !allowed.Contains(key) || live[key] || !f.ModTime.Before(opt.OlderThan) {
			return nil // a name we cannot judge is left alone
		}
		orphans = append(orphans, key)
		return nil
	})
	if err != nil {
		m.d.Tables.Logger().WarnContext(ctx, "orphan files: listing failed", "table", id.String(), "error", storage.PathFree(err))
		return nil, fault.Wrap(fault.Unavailable, err, "Cannot list the files of %s; nothing was deleted, retry later", id)
	}
	sort.Strings(orphans)
	for _, f := range orphans {
		rep.OrphanFiles = append(rep.OrphanFiles, locations.TableFileName(obj.Location, f))
	}
	step(opt, OrphanListed)
	if !opt.DryRun {
		m.pruneTombstones(ctx, obj.ID, id)
	}
	if !opt.DryRun && len(orphans) > 0 {
		if err := m.deleteOrphans(ctx, w, warehouse, id, obj, orphans, opt, rep); err != nil {
			return nil, err
		}
	}
	m.d.Tables.Logger().InfoContext(ctx, "orphan files", "table", id.String(), "listed", rep.Listed, "orphans", len(orphans),
		"spared", rep.Spared, "deleted", rep.Deleted, "failed", rep.Failed, "dry_run", opt.DryRun)
	return rep, nil
}

func step(opt OrphanOptions, s string) {
	if opt.Step != nil {
		opt.Step(s)
	}
}

// liveFiles is the set of normalized locations the table references, and
// the files queued for deletion by an expiry (theirs to delete).
func (m *Maintainer) liveFiles(ctx context.Context, w *store.Warehouse, obj *store.Object, meta table.Metadata, version int, id ident.Ident) (map[string]bool, error) {
	p := m.collectTableFiles(ctx, w, obj, meta, version, m.d.Tables.Logger().With("table", id.String()), true)
	if p.outside > 0 {
		return nil, fault.New(fault.BadRequest, "Cannot remove orphan files of %s: it references %d files outside its location, "+
			"which a listing cannot tell from its own; nothing was deleted", id, p.outside)
	}
	if p.unread > 0 {
		return nil, fault.New(fault.Unavailable, "Cannot remove orphan files of %s: %d of its manifests could not be read; nothing was deleted, retry later", id, p.unread)
	}
	live := make(map[string]bool, len(p.files))
	for f := range p.files {
		if key, err := storagepath.Normalize(f); err == nil {
			live[key] = true
		}
	}
	rows, err := m.d.Tables.Store().ListPendingDeletes(ctx, meta.TableUUID().String())
	if err != nil {
		return nil, storefault.Of(err, w.Name)
	}
	for _, r := range rows {
		if key, err := storagepath.Normalize(r.Location); err == nil {
			live[key] = true
		}
	}
	return live, nil
}
