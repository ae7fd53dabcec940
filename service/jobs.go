package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store"
)

// Job kinds. Each is enqueued in the transaction of the change that causes
// it and run by JobHandlers on any replica with workers.
const (
	// JobPurgeTable deletes the files of a table dropped with purge.
	JobPurgeTable = "purge-table"
)

// JobStates are the states a job can be listed in (River's).
var JobStates = []string{"available", "scheduled", "pending", "running", "retryable", "completed", "cancelled", "discarded"}

// purgeArgs is a purge-table job's arguments: enough to find the files
// once the table's row is gone. The metadata file is read again when the
// job runs, and deleted last (the tiers of
// maintenance.Maintainer.PurgeTableFiles), so an attempt cut short is
// finished by the next.
type purgeArgs struct {
	Warehouse        string   `json:"warehouse"`
	Namespace        []string `json:"namespace"`
	Name             string   `json:"name"`
	TableUUID        string   `json:"table-uuid,omitempty"`
	Location         string   `json:"location"`
	MetadataLocation string   `json:"metadata-location"`
}

func purgeJob(obj *store.Object) (store.Job, error) {
	var head struct {
		UUID string `json:"table-uuid"`
	}
	_ = json.Unmarshal(obj.Metadata, &head) // a table without one is still purged
	a := purgeArgs{Warehouse: obj.Warehouse, Namespace: obj.Namespace, Name: obj.Name, TableUUID: head.UUID,
		Location: obj.Location, MetadataLocation: obj.MetadataLocation}
	raw, err := json.Marshal(a)
	if err != nil {
		return store.Job{}, err
	}
	return store.Job{Kind: JobPurgeTable, Args: raw, Warehouse: obj.Warehouse, Table: obj.Ref().String(),
		TableUUID: head.UUID, Unique: true}, nil
}

// dropWithPurge removes the table's row and enqueues its purge in the same
// transaction: a drop that lands always has its purge job, one that does
// not has none. The job is built from the row read first; a commit that
// lands in between moves the metadata pointer, and the drop is tried again
// on the new row.
func (s *Service) dropWithPurge(ctx context.Context, ref store.ObjectRef) error {
	_, err := s.dropIf(ctx, ref, changeevents.DropTable, true, nil)
	return err
}

// dropIf removes the object ref names, with its drop event (op) and, when
// purge is set, its purge-table job, in one transaction; check, when not
// nil, may refuse the drop (nothing is removed and its error returned).
// The event and the job are built from the row read first: a commit that
// lands in between moves the metadata pointer, and the drop is tried
// again on the new row.
func (s *Service) dropIf(ctx context.Context, ref store.ObjectRef, op string, purge bool, check func(*store.Object) error) (*store.Object, error) {
	for range 5 {
		read := s.store.ObjectGetRefs
		if purge {
			read = s.store.ObjectGet // the purge job needs the full document
		}
		obj, err := read(ctx, ref)
		if err != nil {
			return nil, err
		}
		dctx := s.withEvent(ctx, func() store.Event { return changeevents.Drop(op, objectOf(obj), who(ctx), purge) })
		if purge {
			job, err := purgeJob(obj)
			if err != nil {
				return nil, err
			}
			dctx = store.WithJobs(dctx, job)
		}
		gone, err := s.store.ObjectDeleteIf(dctx, ref, func(o *store.Object) error {
			if o.MetadataLocation != obj.MetadataLocation {
				return errMovedUnderDrop
			}
			if check != nil {
				return check(o)
			}
			return nil
		})
		if !errors.Is(err, errMovedUnderDrop) {
			return gone, err
		}
	}
	return nil, fault.New(fault.Unavailable, "The %s kept changing while it was being dropped; retry", ref.Kind)
}

var errMovedUnderDrop = errors.New("table committed during drop")

// JobHandlers returns the handler of every job kind, for
// store.WorkerConfig. Handlers return errors in the catalog's own words
// (they are stored and listed): details that may name paths go to the log.
func (s *Service) JobHandlers() map[string]store.JobHandler {
	h := map[string]store.JobHandler{JobPurgeTable: s.runPurge, JobDeleteMetadataFiles: s.runDeleteMetadataFiles,
		JobExpireDeleted: s.runExpireDeleted}
	for _, p := range tablePolicies() {
		h[p.kind] = s.policyHandler(p)
	}
	s.feed.Handlers(h)
	return h
}

// runPurge is the purge-table handler. A metadata file that is gone means
// an earlier attempt finished: the job completes.
func (s *Service) runPurge(ctx context.Context, j *store.JobInfo) error {
	var a purgeArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.MetadataLocation == "" {
		return errors.New("purge-table: malformed job arguments")
	}
	w, err := s.warehouse(ctx, a.Warehouse)
	if err != nil {
		return fmt.Errorf("purge-table: warehouse %q: %s", a.Warehouse, clientText(err))
	}
	io, err := s.fileIO(ctx, w, a.MetadataLocation)
	if err != nil {
		return fmt.Errorf("purge-table: %s", clientText(err))
	}
	data, err := io.Read(ctx, a.MetadataLocation)
	if errors.Is(err, storage.ErrNotExist) {
		s.log.InfoContext(ctx, "purge: metadata file already gone", "job", j.ID)
		return nil
	}
	if err != nil {
		s.log.WarnContext(ctx, "purge: cannot read metadata file", "job", j.ID, "error", storage.PathFree(err))
		return errors.New("purge-table: cannot read the table's metadata file (see the catalog log)")
	}
	obj := &store.Object{Warehouse: a.Warehouse, Namespace: a.Namespace, Name: a.Name, Kind: store.KindTable,
		Location: a.Location, MetadataLocation: a.MetadataLocation, Metadata: data}
	return s.maint.PurgeTableFiles(ctx, w, obj, j.Attempt < purgeLenientAttempt)
}

// purgeLenientAttempt is the attempt from which a purge skips manifests it
// cannot read instead of waiting for them.
const purgeLenientAttempt = 2

// clientText is the message of a catalog error as a client would see it.
func clientText(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Message
	}
	return "internal error"
}

// JobFilter narrows ListJobs; zero fields match everything.
type JobFilter struct {
	Warehouse string
	// Table matches jobs about the table of that name, live or dropped
	// (needs Warehouse).
	Table  *Ident
	Kind   string
	States []string
}

// Page sizes of ListJobs.
const (
	DefaultJobPageSize = 100
	MaxJobPageSize     = 1000
)

// ListJobs returns background jobs matching f, newest first, and the token
// of the next page. It requires manage-grants on the server (403
// otherwise); 400 for an unknown state, a table without a warehouse, a
// page size over MaxJobPageSize or a bad page token; 503 when the database is unavailable.
func (s *Service) ListJobs(ctx context.Context, f JobFilter, page Page) ([]*store.JobInfo, string, error) {
	if err := s.authorize(ctx, PrivManageGrants, Resource{Kind: ResourceServer}); err != nil {
		return nil, "", err
	}
	if page.Size <= 0 {
		page.Size = DefaultJobPageSize
	}
	if page.Size > MaxJobPageSize {
		return nil, "", fault.New(fault.BadRequest, "pageSize must be at most %d", MaxJobPageSize)
	}
	for _, st := range f.States {
		if !validJobState(st) {
			return nil, "", fault.New(fault.BadRequest, "Unknown job state %q; one of %v", st, JobStates)
		}
	}
	sf := store.JobFilter{Warehouse: f.Warehouse, Kind: f.Kind, States: f.States}
	if f.Table != nil {
		if f.Warehouse == "" {
			return nil, "", fault.New(fault.BadRequest, "A table filter needs a warehouse")
		}
		sf.Table = f.Table.String()
	}
	jobs, next, err := s.store.ListJobs(ctx, sf, page.store())
	if err != nil {
		return nil, "", storeErr(err, f.Warehouse)
	}
	return jobs, next, nil
}

func validJobState(st string) bool {
	for _, s := range JobStates {
		if s == st {
			return true
		}
	}
	return false
}

// JobStats summarises the queue for /metrics (no authorization: the
// metrics endpoint is the operator's).
func (s *Service) JobStats(ctx context.Context) (store.JobStats, error) {
	st, err := s.store.JobStats(ctx)
	return st, storeErr(err, "")
}
