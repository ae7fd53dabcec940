// Package upkeep is the catalog's background work: the handler of every
// job kind, the purge of a dropped table's files, the scheduled per-table
// policies (snapshot expiry, orphan removal, column-file compaction), the
// soft-deleted tables and views (their listing, undrop and the end of their
// retention) and the listing of the job queue.
//
// It runs the operations it schedules (expiry, orphan removal, compaction,
// purge) through functions it is given, and takes its store, authorizer,
// warehouse lookup, table loader, clock and logger as values (Deps): the
// requests that enqueue its jobs (drops, commits) stay with the service.
package upkeep

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// Deps are what the background work needs from the catalog, as values.
type Deps struct {
	Store store.Store
	// Authorize checks that the caller in ctx holds priv on r: nil when it
	// does, a refusal when it does not, any other error when it cannot
	// tell.
	Authorize func(ctx context.Context, priv access.Privilege, r access.Resource) error
	// Warehouse returns the named warehouse, or its 404 (or the store's
	// error).
	Warehouse func(ctx context.Context, name string) (*store.Warehouse, error)
	// ReadTable loads a table's row and parsed metadata, or its 404.
	ReadTable func(ctx context.Context, warehouse string, id ident.Ident) (*store.Object, *tablemeta.Entry, error)
	// FileIO opens the storage of loc in w.
	FileIO func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error)
	// Maintain, RemoveOrphanFiles and Compact are the operations the
	// scheduled policies run, authorized as any request.
	Maintain          func(ctx context.Context, warehouse string, id ident.Ident, opt maintenance.MaintainOptions) (*maintenance.MaintainReport, error)
	RemoveOrphanFiles func(ctx context.Context, warehouse string, id ident.Ident, opt maintenance.OrphanOptions) (*maintenance.OrphanReport, error)
	Compact           func(ctx context.Context, warehouse string, id ident.Ident, opt v4commits.CompactOptions) (*v4commits.CompactionReport, error)
	// PurgeTableFiles deletes a dropped table's files
	// (maintenance.Maintainer.PurgeTableFiles).
	PurgeTableFiles func(ctx context.Context, w *store.Warehouse, obj *store.Object, strict bool) error
	// MoreHandlers adds the handlers of the job kinds other rooms run.
	MoreHandlers func(h map[string]store.JobHandler)
	// WithEvent returns ctx carrying the event build makes for the next
	// store change, when events are on; Who names the request making it.
	WithEvent func(ctx context.Context, build func() store.Event) context.Context
	Who       func(ctx context.Context) changeevents.Who
	// PutErr maps the errors of putting an object under a name (taken,
	// missing namespace, overlapping location).
	PutErr func(err error, kind store.ObjectKind, id ident.Ident, warehouse string) error
	Now    func() time.Time
	Logger *slog.Logger
}

// Upkeep runs the catalog's background work.
type Upkeep struct {
	d Deps
}

// New returns the background work over d.
func New(d Deps) *Upkeep {
	return &Upkeep{d: d}
}

// JobHandlers returns the handler of every job kind, for
// store.WorkerConfig. Handlers return errors in the catalog's own words
// (they are stored and listed): details that may name paths go to the log.
func (u *Upkeep) JobHandlers() map[string]store.JobHandler {
	h := map[string]store.JobHandler{JobPurgeTable: u.runPurge, JobExpireDeleted: u.runExpireDeleted,
		JobPruneTombstones: u.runPruneTombstones}
	for _, p := range tablePolicies() {
		h[p.kind] = u.policyHandler(p)
	}
	if u.d.MoreHandlers != nil {
		u.d.MoreHandlers(h)
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
