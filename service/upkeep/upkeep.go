// Package upkeep is the catalog's background work: the handler of every
// job kind (but the change feed's), the purge of a dropped table's files,
// the scheduled per-table policies (snapshot expiry, orphan removal,
// column-file compaction), the deletion of the metadata files a commit
// drops from the log, the soft-deleted tables and views (their listing,
// undrop and the end of their retention) and the listing of the job
// queue.
//
// It runs the operations it schedules (expiry, orphan removal, compaction,
// purge) through the rooms that own them (maintenance, v4commits), and
// reaches tables through tableaccess (Deps). The changes that enqueue its
// jobs stay where they are made: a drop's in package tables, a commit's
// as package commitjobs builds them.
package upkeep

import (
	"errors"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/commitjobs"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// Deps are what the background work needs from the catalog, as values.
type Deps struct {
	// Tables gives the store, authorize, the warehouse lookup, the table
	// loader, file IO, the event builders, the clock and the logger.
	Tables *tableaccess.Access
	// Maint runs the snapshot expiry and orphan removal the scheduled
	// policies ask for, and purges dropped tables' files.
	Maint *maintenance.Maintainer
	// V4 runs the compaction a scheduled policy asks for.
	V4 *v4commits.Committer
}

// Upkeep runs the catalog's background work.
type Upkeep struct {
	d Deps
}

// New returns the background work over d.
func New(d Deps) *Upkeep {
	return &Upkeep{d: d}
}

// JobHandlers returns the handler of every job kind this package runs
// (every kind but the change feed's, which the service adds), for
// store.WorkerConfig.
// Handlers return errors in the catalog's own words
// (they are stored and listed): details that may name paths go to the log.
func (u *Upkeep) JobHandlers() map[string]store.JobHandler {
	h := map[string]store.JobHandler{JobPurgeTable: u.runPurge, JobExpireDeleted: u.runExpireDeleted,
		JobPruneTombstones: u.runPruneTombstones, commitjobs.JobDeleteMetadataFiles: u.runDeleteMetadataFiles}
	for _, p := range commitjobs.Policies() {
		h[p.Kind] = u.policyHandler(p, policyRuns[p.Kind])
	}
	return h
}

// clientText is the message of a catalog error as a client would see it.
func clientText(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Message
	}
	return "internal error"
}

// SkipGone is nil for a warehouse or table that no longer exists (the job
// has nothing left to do) and the error's client text, prefixed with the
// job's kind, otherwise.
func SkipGone(kind string, err error) error {
	switch fault.KindOf(err) {
	case fault.NoSuchTable, fault.NoSuchWarehouse, fault.NoSuchNamespace:
		return nil
	}
	return errors.New(kind + ": " + clientText(err))
}
