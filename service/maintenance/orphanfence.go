package maintenance

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// OrphanLease is how long a removal's recorded candidates hold without
// renewal. A run renews before each batch of deletes and stops once it
// has lost a row; a later run takes over the rows of one that died when
// the lease has run out. Deleting one batch must take far less (a batch
// is bounded by orphanBatchTime).
const OrphanLease = 10 * time.Minute

// OrphanTombstoneRetention is how long the row of a file a removal
// deleted stays as a tombstone. While it does, no commit may add the file
// (409) and the table is held: a commit that does not say which files it
// adds has them listed before its swap (a v1–v3 snapshot's manifests are
// read). A writer that read or checked its file before the removal and
// commits more than this after the file was deleted is not refused: its
// commit lands naming a missing file. Later removals of the table prune
// older tombstones.
const OrphanTombstoneRetention = 7 * 24 * time.Hour

// orphanBatch is how many files one renewal covers, and orphanBatchTime
// how long their deletes may take: well inside the lease.
const (
	orphanBatch     = 256
	orphanBatchTime = OrphanLease / 4
)

// deleteOrphans deletes the orphans of one listing so that no file a
// landed commit references is ever deleted. It records them as the run's
// candidates (ordered with every commit of the table by the store), reads
// the table's metadata again, drops every candidate it references, and
// deletes the rest, renewing the claim between batches; the rows are
// released at the end whatever happened. A commit ordered before the
// recording is in the second read; one ordered after it cannot add a
// candidate (409). Errors: the store's, 404/409 when the table was dropped
// or replaced meanwhile, the re-read's (nothing is deleted then).
func (m *Maintainer) deleteOrphans(ctx context.Context, w *store.Warehouse, warehouse string, id ident.Ident, obj *store.Object,
	orphans []string, opt OrphanOptions, rep *OrphanReport) error {
	run := uuid.NewString()
	held, err := m.d.Tables.Store().ClaimOrphanCandidates(ctx, obj.ID, run, orphans, OrphanLease)
	if errors.Is(err, store.ErrNotFound) {
		return fault.Wrap(fault.CommitFailed, err, "%s was dropped or replaced while its orphan files were listed; nothing was deleted", id)
	}
	if err != nil {
		return storefault.Of(err, w.Name)
	}
	release := true
	defer func() {
		if release {
			m.release(ctx, obj.ID, run, id)
		}
	}()
	step(opt, OrphanClaimed)
	now, e, err := m.d.Tables.ReadTable(ctx, warehouse, id)
	if err != nil {
		return err
	}
	if now.ID != obj.ID {
		return fault.New(fault.CommitFailed, "%s was replaced while its orphan files were listed; nothing was deleted", id)
	}
	live, err := m.liveFiles(ctx, w, now, e.Meta, e.Version, id)
	if err != nil {
		return err
	}
	doomed, spared := make([]string, 0, len(held)), []string{}
	for _, f := range held {
		if live[f] {
			spared = append(spared, f)
		} else {
			doomed = append(doomed, f)
		}
	}
	rep.Spared = len(orphans) - len(doomed)
	// A spared file is referenced: let commits that carry it (a leaf
	// rewrite lists every file of the leaf) land now rather than after
	// the last batch. On failure the rows stay until the run's release.
	stillHeld := len(held)
	if len(spared) > 0 && m.d.Tables.Store().ReleaseOrphanCandidates(ctx, obj.ID, run, spared) == nil {
		stillHeld = len(doomed)
	}
	release = m.deleteDoomed(ctx, w, obj.ID, run, id, doomed, stillHeld, rep, nil)
	return nil
}

// deleteDoomed deletes doomed in batches, renewing the run's claim before
// each and turning the rows of the files deleted into tombstones after
// it, then passes them to done (when set). It stops when the claim is
// lost. It reports whether the run's
// remaining candidate rows may be released: not when a tombstone could
// not be written (those rows must keep holding their deleted files; a
// later run turns them into tombstones once the lease has run out).
func (m *Maintainer) deleteDoomed(ctx context.Context, w *store.Warehouse, objectID, run string, id ident.Ident,
	doomed []string, held int, rep *OrphanReport, done func(gone []string)) bool {
	for start := 0; start < len(doomed); start += orphanBatch {
		batch := doomed[start:min(start+orphanBatch, len(doomed))]
		n, err := m.d.Tables.Store().RenewOrphanCandidates(ctx, objectID, run)
		if err != nil || n < held-rep.Deleted {
			// Rows lost (or unknown): another run may have taken them
			// over. Stop.
			rep.Failed += len(doomed) - start
			m.d.Tables.Logger().WarnContext(ctx, "orphan files: claim lost, stopped", "table", id.String(), "left", len(doomed)-start)
			return true
		}
		bctx, cancel := context.WithTimeout(ctx, orphanBatchTime)
		gone, failed := m.deleteFiles(bctx, w, batch)
		cancel()
		rep.Deleted += len(gone)
		rep.Failed += failed
		if err := m.tombstone(ctx, objectID, run, gone); err != nil {
			rep.Failed += len(doomed) - start - len(batch)
			m.d.Tables.Logger().WarnContext(ctx, "orphan files: tombstones not written, stopped; the rows hold until a later run takes them over",
				"table", id.String(), "error", err)
			return false
		}
		if done != nil {
			done(gone)
		}
	}
	return true
}

// tombstone records that the run deleted gone; it runs even when the
// request was cancelled, since the files are gone either way.
func (m *Maintainer) tombstone(ctx context.Context, objectID, run string, gone []string) error {
	if len(gone) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return m.d.Tables.Store().TombstoneOrphanCandidates(ctx, objectID, run, gone)
}

// pruneTombstones drops the table's tombstones older than
// OrphanTombstoneRetention. A failure is logged: old tombstones only keep
// the table held a while longer.
func (m *Maintainer) pruneTombstones(ctx context.Context, objectID string, id ident.Ident) {
	if _, err := m.d.Tables.Store().PruneOrphanTombstones(ctx, objectID, m.d.Tables.Now().Add(-OrphanTombstoneRetention), 0); err != nil {
		m.d.Tables.Logger().WarnContext(ctx, "orphan files: old tombstones not pruned", "table", id.String(), "error", err)
	}
}

// release drops the run's candidate rows (files spared, or not deleted),
// lifting the table's hold unless tombstones remain; it runs even when
// the request was cancelled. Rows it cannot drop hold their files until a
// later run turns them into tombstones (OrphanLease).
func (m *Maintainer) release(ctx context.Context, objectID, run string, id ident.Ident) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := m.d.Tables.Store().ReleaseOrphanCandidates(ctx, objectID, run, nil); err != nil {
		m.d.Tables.Logger().WarnContext(ctx, "orphan files: candidates not released; the next run takes them over once their lease runs out",
			"table", id.String(), "error", err)
	}
}
