package upkeep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
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

// PurgeJob is the purge-table job of the table obj (its full row, as read
// before the drop); an error only when its arguments cannot be encoded.
func PurgeJob(obj *store.Object) (store.Job, error) {
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

// runPurge is the purge-table handler. A metadata file that is gone means
// an earlier attempt finished: the job completes.
func (u *Upkeep) runPurge(ctx context.Context, j *store.JobInfo) error {
	var a purgeArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.MetadataLocation == "" {
		return errors.New("purge-table: malformed job arguments")
	}
	w, err := u.d.Tables.Warehouse(ctx, a.Warehouse)
	if err != nil {
		return fmt.Errorf("purge-table: warehouse %q: %s", a.Warehouse, clientText(err))
	}
	io, err := u.d.Tables.FileIO(ctx, w, a.MetadataLocation)
	if err != nil {
		return fmt.Errorf("purge-table: %s", clientText(err))
	}
	data, err := io.Read(ctx, a.MetadataLocation)
	if errors.Is(err, storage.ErrNotExist) {
		u.d.Tables.Logger().InfoContext(ctx, "purge: metadata file already gone", "job", j.ID)
		return nil
	}
	if err == nil {
		data, err = tablemeta.Inflate(data) // a registered table's file may be gzip-compressed
	}
	if err != nil {
		u.d.Tables.Logger().WarnContext(ctx, "purge: cannot read metadata file", "job", j.ID, "error", storage.PathFree(err))
		return errors.New("purge-table: cannot read the table's metadata file (see the catalog log)")
	}
	obj := &store.Object{Warehouse: a.Warehouse, Namespace: a.Namespace, Name: a.Name, Kind: store.KindTable,
		Location: a.Location, MetadataLocation: a.MetadataLocation, Metadata: data}
	return u.d.Maint.PurgeTableFiles(ctx, w, obj, j.Attempt < purgeLenientAttempt)
}

// purgeLenientAttempt is the attempt from which a purge skips manifests it
// cannot read instead of waiting for them.
const purgeLenientAttempt = 2

// JobFilter narrows ListJobs; zero fields match everything.
type JobFilter struct {
	Warehouse string
	// Table matches jobs about the table of that name, live or dropped
	// (needs Warehouse).
	Table  *ident.Ident
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
func (u *Upkeep) ListJobs(ctx context.Context, f JobFilter, page store.Page) ([]*store.JobInfo, string, error) {
	if err := u.d.Tables.Authorize(ctx, access.PrivManageGrants, access.Resource{Kind: access.ResourceServer}); err != nil {
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
	jobs, next, err := u.d.Tables.Store().ListJobs(ctx, sf, page)
	if err != nil {
		return nil, "", storefault.Of(err, f.Warehouse)
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
// metrics endpoint is the operator's); an error (503 when the database is
// unavailable) when the store cannot count.
func (u *Upkeep) JobStats(ctx context.Context) (store.JobStats, error) {
	st, err := u.d.Tables.Store().JobStats(ctx)
	return st, storefault.Of(err, "")
}
