package upkeep

import (
	"context"
	"errors"
	"time"

	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// JobPruneTombstones prunes the tombstones orphan-file removals and
// expiries leave (maintenance.OrphanTombstoneRetention) on every table:
// without it a table whose removals stop would stay held for good.
const JobPruneTombstones = "prune-orphan-tombstones"

// Pacing of the prune: at most tombstonePruneBatch rows a round (bounded
// work and transactions); a full round runs again after
// tombstonePruneSoon, otherwise after tombstonePruneEvery.
const (
	tombstonePruneBatch = 5000
	tombstonePruneSoon  = time.Minute
	tombstonePruneEvery = time.Hour
)

// Jobs are the recurring jobs upkeep needs on any replica that runs
// workers: the tombstone prune. They are unique, so enqueueing them again
// is a no-op.
func (u *Upkeep) Jobs() []store.Job {
	return []store.Job{{Kind: JobPruneTombstones, Unique: true}}
}

// runPruneTombstones removes up to tombstonePruneBatch tombstones older
// than the retention, oldest first, and snoozes until its next round.
func (u *Upkeep) runPruneTombstones(ctx context.Context, _ *store.JobInfo) error {
	after, err := u.pruneTombstones(ctx)
	if err != nil {
		return err
	}
	return &store.JobSnooze{After: after}
}

// pruneTombstones is one round of the prune; it returns how long until
// the next, or an error in the catalog's words.
func (u *Upkeep) pruneTombstones(ctx context.Context) (time.Duration, error) {
	n, err := u.d.Tables.Store().PruneOrphanTombstones(ctx, "", u.d.Tables.Now().Add(-maintenance.OrphanTombstoneRetention), tombstonePruneBatch)
	if err != nil {
		return 0, errors.New(JobPruneTombstones + ": " + clientText(storefault.Of(err, "")))
	}
	if n > 0 {
		u.d.Tables.Logger().InfoContext(ctx, "orphan tombstones pruned", "count", n)
	}
	if n >= tombstonePruneBatch {
		return tombstonePruneSoon, nil
	}
	return tombstonePruneEvery, nil
}
