package maintenance

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// Expiry defaults, as Iceberg's table properties name them: a table
// without them keeps 5 days of history and at least one snapshot.
const (
	PropMaxSnapshotAge     = "history.expire.max-snapshot-age-ms"
	PropMinSnapshotsToKeep = "history.expire.min-snapshots-to-keep"
	defaultMaxSnapshotAge  = 5 * 24 * time.Hour
	// deleteWorkers bounds the concurrent deletes of a clean-up.
	deleteWorkers = 8
)

// MaintainOptions says what a maintenance run expires. Zero values take
// the table's history.expire.* properties (or Iceberg's defaults).
type MaintainOptions struct {
	// ExpireOlderThan expires snapshots committed before this time.
	ExpireOlderThan time.Time
	// RetainLast keeps at least this many ancestors of every branch head.
	RetainLast int
	// DryRun computes and reports, commits and deletes nothing.
	DryRun bool
	// Step, when set, is called as the run passes ExpireCommitted and
	// ExpireClaimed, so that a test can land a commit in between.
	Step func(step string)
}

// MaintainReport is what a maintenance run did (or, dry, would do).
// Files are named relative to the table location where they lie below it.
type MaintainReport struct {
	ExpiredSnapshots []int64
	// DeletedFiles are the files deleted (dry run: that would be).
	DeletedFiles []string
	// ResumedFiles counts files of an earlier, interrupted clean-up that
	// this run deleted.
	ResumedFiles int
	// FailedFiles counts deletes that failed; they stay queued for the
	// next run.
	FailedFiles      int
	MetadataLocation string
	DryRun           bool
}

// Maintain expires a table's old snapshots and deletes the files no
// remaining snapshot references: data, delete, column and deletion-vector
// files, manifests, leaves and manifest lists or roots, only inside the
// table's location, never by listing a directory. The files to delete are
// queued in the database before the remove-snapshots commit and deleted
// after it lands, so a run cut short is finished by the next one and a
// commit that does not land deletes nothing. Needs table-write-metadata
// and table-write-data (authorizeWrite's error is returned); 400 for an
// invalid identifier, 404 for an unknown table, 409 when a concurrent
// commit wins (nothing expired, retry); other errors are the commit's
// (tablecommit.Committer.CommitExpiry).
func (m *Maintainer) Maintain(ctx context.Context, warehouse string, id ident.Ident, opt MaintainOptions) (*MaintainReport, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := m.authorizeWrite(ctx, warehouse, id); err != nil {
		return nil, err
	}
	w, err := m.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	rep := &MaintainReport{DryRun: opt.DryRun, ExpiredSnapshots: []int64{}, DeletedFiles: []string{}}
	obj, meta, version, err := m.loadForMaintain(ctx, w, id)
	if err != nil {
		return nil, err
	}
	if !opt.DryRun && GCDisabled(meta.Properties()) {
		return nil, fault.New(fault.Validation, "Cannot expire snapshots: GC is disabled (deleting files may corrupt other tables); the table has gc.enabled=false")
	}
	if !opt.DryRun {
		// An earlier run cut short first: its queue is checked against the
		// table as it is now.
		if err := m.drainPendingDeletes(ctx, w, warehouse, id, obj, meta, rep, true, opt); err != nil {
			return nil, err
		}
	}
	expire := snapshotsToExpire(meta, tableaccess.WithWarehouseDefaults(w, meta.Properties(), PropMaxSnapshotAge, PropMinSnapshotsToKeep), opt, m.d.Tables.Now())
	rep.MetadataLocation = obj.MetadataLocation
	if len(expire) == 0 {
		return rep, nil
	}
	rep.ExpiredSnapshots = expire
	doomed, err := m.filesOnlyIn(ctx, w, meta, version, expire)
	if err != nil {
		return nil, err
	}
	if opt.DryRun {
		for _, f := range doomed {
			rep.DeletedFiles = append(rep.DeletedFiles, locations.TableFileName(meta.Location(), f))
		}
		return rep, nil
	}
	if err := m.queueDeletes(ctx, meta, doomed, expire); err != nil {
		return nil, err
	}
	res, err := m.d.Commits.CommitExpiry(ctx, w, id, meta, expire)
	if err != nil {
		return nil, err
	}
	rep.MetadataLocation = res.MetadataLocation
	stepExpire(opt, ExpireCommitted)
	if err := m.drainPendingDeletes(ctx, w, warehouse, id, res.Object, res.Meta, rep, false, opt); err != nil {
		return nil, err
	}
	return rep, nil
}

// GCDisabled reports whether a table's properties turn Iceberg's
// gc.enabled off: its files may be shared with other tables, so the
// catalog deletes none of its data files (expiry and orphan removal
// refuse, a purge keeps them), as Java's catalogs do. As in Java, any
// value but "true" (in any case) turns it off.
func GCDisabled(props map[string]string) bool {
	v, ok := props["gc.enabled"]
	return ok && !strings.EqualFold(strings.TrimSpace(v), "true")
}

// loadForMaintain reads the table's row and its parsed metadata (readTable).
func (m *Maintainer) loadForMaintain(ctx context.Context, w *store.Warehouse, id ident.Ident) (*store.Object, table.Metadata, int, error) {
	obj, e, err := m.d.Tables.ReadTable(ctx, w.Name, id)
	if err != nil {
		return nil, nil, 0, err
	}
	return obj, e.Meta, e.Version, nil
}

// snapshotsToExpire picks the snapshots to expire by opt, else by the
// history.expire.* values of props, oldest first: those
// committed before the cut-off that no ref points at and that are not among
// the newest RetainLast ancestors of a branch head.
func snapshotsToExpire(meta table.Metadata, props map[string]string, opt MaintainOptions, now time.Time) []int64 {
	cutoff := opt.ExpireOlderThan
	if cutoff.IsZero() {
		age := defaultMaxSnapshotAge
		if ms, err := strconv.ParseInt(props[PropMaxSnapshotAge], 10, 64); err == nil && ms >= 0 {
			age = time.Duration(ms) * time.Millisecond
		}
		cutoff = now.Add(-age)
	}
	retain := opt.RetainLast
	if retain <= 0 {
		retain = 1
		if n, err := strconv.Atoi(props[PropMinSnapshotsToKeep]); err == nil && n > 0 {
			retain = n
		}
	}
	keep := map[int64]bool{}
	for _, ref := range meta.Refs() {
		keep[ref.SnapshotID] = true
		if ref.SnapshotRefType != table.BranchRef {
			continue
		}
		n := 0
		for snap := meta.SnapshotByID(ref.SnapshotID); snap != nil && n < retain; n++ {
			keep[snap.SnapshotID] = true
			if snap.ParentSnapshotID == nil {
				break
			}
			snap = meta.SnapshotByID(*snap.ParentSnapshotID)
		}
	}
	var out []int64
	for _, snap := range meta.Snapshots() {
		if !keep[snap.SnapshotID] && time.UnixMilli(snap.TimestampMs).Before(cutoff) {
			out = append(out, snap.SnapshotID)
		}
	}
	return out
}

// queueDeletes records the files an expiry will delete, before its commit.
func (m *Maintainer) queueDeletes(ctx context.Context, meta table.Metadata, files []string, expire []int64) error {
	now := m.d.Tables.Now()
	rows := make([]store.PendingDelete, len(files))
	for i, f := range files {
		rows[i] = store.PendingDelete{TableUUID: meta.TableUUID().String(), Location: f, SnapshotIDs: expire, CreatedAt: now}
	}
	if err := m.d.Tables.Store().AddPendingDeletes(ctx, rows); err != nil {
		return storefault.Of(err, "")
	}
	return nil
}

// drainPendingDeletes works off the table's clean-up queue: a row whose
// expiry did not land (one of its snapshots still exists in meta) is
// dropped with its file untouched; the other files go through the fence
// (fencedDelete), which keeps and unqueues those the table references
// when read again and deletes the rest. The queue stays the durable to-do
// list: a row leaves it only once its file is gone or kept, so a failed
// delete or a run cut short leaves it to the next run. resumed says the
// rows come from an earlier run.
func (m *Maintainer) drainPendingDeletes(ctx context.Context, w *store.Warehouse, warehouse string, id ident.Ident, obj *store.Object,
	meta table.Metadata, rep *MaintainReport, resumed bool, opt MaintainOptions) error {
	tableUUID := meta.TableUUID().String()
	rows, err := m.d.Tables.Store().ListPendingDeletes(ctx, tableUUID)
	if err != nil {
		return storefault.Of(err, "")
	}
	allowed := locations.TablePrefixes(w, obj.Location)
	var drop, doomed []string
	for _, r := range rows {
		landed := !slices.ContainsFunc(r.SnapshotIDs, func(id int64) bool { return meta.SnapshotByID(id) != nil })
		if !landed || !allowed.Contains(r.Location) {
			drop = append(drop, r.Location)
			continue
		}
		doomed = append(doomed, r.Location)
	}
	if err := m.d.Tables.Store().RemovePendingDeletes(ctx, tableUUID, drop); err != nil {
		return storefault.Of(err, "")
	}
	if len(doomed) == 0 {
		return nil
	}
	out, err := m.fencedDelete(ctx, w, warehouse, id, obj, doomed, opt)
	if err != nil {
		return err
	}
	if err := m.d.Tables.Store().RemovePendingDeletes(ctx, tableUUID, out.kept); err != nil {
		return storefault.Of(err, "")
	}
	// Deleted leaves leave the base-file index (other names match nothing).
	if err := m.d.Tables.Store().FileIndexForgetLeaves(ctx, obj.ID, out.deleted); err != nil {
		return storefault.Of(err, "")
	}
	if err := m.d.Tables.Store().RemovePendingDeletes(ctx, tableUUID, out.deleted); err != nil {
		return storefault.Of(err, "")
	}
	for _, f := range out.deleted {
		rep.DeletedFiles = append(rep.DeletedFiles, locations.TableFileName(meta.Location(), f))
	}
	if resumed {
		rep.ResumedFiles += len(out.deleted)
	}
	rep.FailedFiles += out.failed
	return nil
}

// deleteFiles deletes files concurrently (bounded) and returns the ones
// that are gone, in input order, and the number that failed.
func (m *Maintainer) deleteFiles(ctx context.Context, w *store.Warehouse, files []string) ([]string, int) {
	ok := make([]bool, len(files))
	var g errgroup.Group
	g.SetLimit(deleteWorkers)
	for i, f := range files {
		g.Go(func() error {
			io, err := m.d.Tables.FileIO(ctx, w, f)
			if err == nil {
				if err = io.Delete(ctx, f); err != nil {
					if gone, xerr := io.Exists(ctx, f); xerr == nil && !gone {
						err = nil // deleted by an earlier, interrupted run
					}
				}
			}
			if err != nil {
				m.d.Tables.Logger().DebugContext(ctx, "maintain: delete failed", "file", locations.FileName(w, "", f), "error", storage.PathFree(err))
			}
			ok[i] = err == nil
			return nil
		})
	}
	_ = g.Wait() // workers report in ok
	var gone []string
	for i, f := range files {
		if ok[i] {
			gone = append(gone, f)
		}
	}
	return gone, len(files) - len(gone)
}

// errUnreadable wraps a manifest that could not be read while choosing
// files: an expiry that cannot see every reference deletes nothing.
func errUnreadable(what string, err error) error {
	return fault.Wrap(fault.Internal, err, "read %s", what)
}
