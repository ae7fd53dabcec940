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
	held, err := m.d.Store.ClaimOrphanCandidates(ctx, obj.ID, run, orphans, OrphanLease)
	if errors.Is(err, store.ErrNotFound) {
		return fault.Wrap(fault.CommitFailed, err, "%s was dropped or replaced while its orphan files were listed; nothing was deleted", id)
	}
	if err != nil {
		return storefault.Of(err, w.Name)
	}
	defer m.release(ctx, obj.ID, run, id)
	step(opt, OrphanClaimed)
	now, e, err := m.d.LoadTable(ctx, warehouse, id)
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
	doomed := make([]string, 0, len(held))
	for _, f := range held {
		if !live[f] {
			doomed = append(doomed, f)
		}
	}
	rep.Spared = len(orphans) - len(doomed)
	for start := 0; start < len(doomed); start += orphanBatch {
		batch := doomed[start:min(start+orphanBatch, len(doomed))]
		n, err := m.d.Store.RenewOrphanCandidates(ctx, obj.ID, run)
		if err != nil || n < len(held) {
			// Rows lost (or unknown): another run may have taken them
			// over and a commit may now add them. Stop.
			rep.Failed += len(doomed) - start
			m.d.Logger.WarnContext(ctx, "orphan files: claim lost, stopped", "table", id.String(), "left", len(doomed)-start)
			return nil
		}
		bctx, cancel := context.WithTimeout(ctx, orphanBatchTime)
		gone, failed := m.deleteFiles(bctx, w, batch)
		cancel()
		rep.Deleted += len(gone)
		rep.Failed += failed
	}
	return nil
}

// release drops the run's candidate rows, lifting the table's hold; it
// runs even when the request was cancelled. Rows it cannot drop hold the
// table until a later run takes them over (OrphanLease).
func (m *Maintainer) release(ctx context.Context, objectID, run string, id ident.Ident) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := m.d.Store.ReleaseOrphanCandidates(ctx, objectID, run, nil); err != nil {
		m.d.Logger.WarnContext(ctx, "orphan files: candidates not released; the next run takes them over once their lease runs out",
			"table", id.String(), "error", err)
	}
}
