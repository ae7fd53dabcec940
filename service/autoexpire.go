package service

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/store"
)

// Scheduled snapshot expiry: a table whose policy is on gets an
// expire-snapshots job with every commit that lands (in the commit's
// transaction, Unique: at most one waiting or running per table), run
// PropExpireDelay later. The job does what `catalog maintain` does with
// the table's own history.expire.* properties, and runs again later while
// snapshots remain that may expire then.
const (
	// JobExpireSnapshots is the kind of the scheduled expiry job.
	JobExpireSnapshots = "expire-snapshots"
	// PropExpireEnabled turns scheduled expiry on ("true"), as a table
	// property or, for every table of it, a warehouse property; the
	// table's value wins.
	PropExpireEnabled = "lakehold.expire-snapshots.enabled"
	// PropExpireDelay is how long after a commit (or after the previous
	// run) the job runs, in milliseconds (default one hour).
	PropExpireDelay = "lakehold.expire-snapshots.delay-ms"
)

const defaultExpireDelay = time.Hour

// policy reads a maintenance property: the table's, else its warehouse's.
func policy(w *store.Warehouse, props map[string]string, key string) string {
	if v, ok := props[key]; ok {
		return v
	}
	return w.Properties[key]
}

type expireArgs struct {
	Warehouse string   `json:"warehouse"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	TableUUID string   `json:"table-uuid"`
}

// expiryJob is the expire-snapshots job for the table id whose new
// metadata is meta, when its policy is on.
func (s *Service) expiryJob(w *store.Warehouse, id Ident, meta table.Metadata) (store.Job, bool) {
	on, _ := strconv.ParseBool(policy(w, meta.Properties(), PropExpireEnabled))
	if !on {
		return store.Job{}, false
	}
	return s.expiryJobAt(w, id, meta.TableUUID().String(), s.now().Add(expireDelay(w, meta.Properties()))), true
}

func expireDelay(w *store.Warehouse, props map[string]string) time.Duration {
	if ms, err := strconv.ParseInt(policy(w, props, PropExpireDelay), 10, 64); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return defaultExpireDelay
}

func (s *Service) expiryJobAt(w *store.Warehouse, id Ident, uuid string, at time.Time) store.Job {
	raw, _ := json.Marshal(expireArgs{Warehouse: w.Name, Namespace: id.Namespace, Name: id.Name, TableUUID: uuid}) // cannot fail
	return store.Job{Kind: JobExpireSnapshots, Args: raw, Warehouse: w.Name, Table: id.String(), TableUUID: uuid,
		Unique: true, RunAt: at}
}

// jobPrincipal is who a scheduled job acts as: the operator, as
// `catalog maintain` does. Setting the policy needed table-write-metadata.
var jobPrincipal = identity.Principal{Source: identity.SourceLocal, Subject: "jobs"}

// runExpire is the expire-snapshots handler. A table that is gone, renamed
// away, replaced by another of the same name or whose policy was turned
// off completes the job without doing anything.
func (s *Service) runExpire(ctx context.Context, j *store.JobInfo) error {
	var a expireArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.Name == "" {
		return errors.New("expire-snapshots: malformed job arguments")
	}
	ctx = identity.With(ctx, jobPrincipal)
	id := Ident{Namespace: a.Namespace, Name: a.Name}
	w, err := s.warehouse(ctx, a.Warehouse)
	if err != nil {
		return skipGone(err)
	}
	_, e, err := s.readTable(ctx, w.Name, id)
	if err != nil {
		return skipGone(err)
	}
	if e.Meta.TableUUID().String() != a.TableUUID {
		return nil
	}
	if on, _ := strconv.ParseBool(policy(w, e.Meta.Properties(), PropExpireEnabled)); !on {
		return nil
	}
	rep, err := s.Maintain(ctx, w.Name, id, MaintainOptions{})
	if err != nil {
		return errors.New("expire-snapshots: " + clientText(err))
	}
	s.log.InfoContext(ctx, "scheduled snapshot expiry", "table", id.String(), "expired", len(rep.ExpiredSnapshots),
		"deleted_files", len(rep.DeletedFiles), "failed_files", rep.FailedFiles)
	// Snapshots that are young now expire later, without a commit to
	// schedule the run: the same job runs again (a snooze keeps it the
	// table's one expiry job; a commit meanwhile adds none).
	_, e, err = s.readTable(ctx, w.Name, id)
	if err == nil && len(e.Meta.Snapshots()) > 1 {
		return &store.JobSnooze{After: max(expireDelay(w, e.Meta.Properties()), time.Minute)}
	}
	return nil
}

// skipGone is nil for a warehouse or table that no longer exists (the job
// has nothing left to do) and the error's client text otherwise.
func skipGone(err error) error {
	switch fault.KindOf(err) {
	case fault.NoSuchTable, fault.NoSuchWarehouse, fault.NoSuchNamespace:
		return nil
	}
	return errors.New("expire-snapshots: " + clientText(err))
}
