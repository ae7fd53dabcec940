package upkeep

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// Tables that maintain themselves. A table whose policy is on (a table
// property, or for every table of it a warehouse property; the table's
// value wins) gets the policy's job with every commit that lands, in the
// commit's transaction, Unique: at most one waiting or running per table
// and kind, so a table is never maintained twice at once. The job runs the
// policy's delay later and, while there is more to do later, sleeps for
// the delay and runs again (the same job), so a table without commits is
// kept too. A table that is gone, renamed away, replaced by another of the
// same name or whose policy was turned off ends the job at its next run.
const (
	// JobExpireSnapshots expires snapshots as `catalog maintain` does,
	// by the table's history.expire.* properties.
	JobExpireSnapshots = "expire-snapshots"
	// PropExpireEnabled turns scheduled expiry on ("true").
	PropExpireEnabled = "lakehold.expire-snapshots.enabled"
	// PropExpireDelay is the delay in milliseconds (default one hour).
	PropExpireDelay = "lakehold.expire-snapshots.delay-ms"

	// JobRemoveOrphanFiles removes orphan files older than
	// PropOrphanAge (default 3 days), as RemoveOrphanFiles does.
	JobRemoveOrphanFiles = "remove-orphan-files"
	// PropOrphanEnabled turns scheduled orphan removal on ("true").
	PropOrphanEnabled = "lakehold.remove-orphan-files.enabled"
	// PropOrphanDelay is the delay in milliseconds (default one day).
	PropOrphanDelay = "lakehold.remove-orphan-files.delay-ms"
	// PropOrphanAge is the safety window in milliseconds (at least one
	// hour, default 3 days).
	PropOrphanAge = "lakehold.remove-orphan-files.older-than-ms"

	// JobCompactColumnFiles compacts a v4 table as `catalog compact` does:
	// the bases past the write.column-files.compact.* thresholds.
	JobCompactColumnFiles = "compact-column-files"
	// PropCompactEnabled turns scheduled compaction on ("true").
	PropCompactEnabled = "lakehold.compact-column-files.enabled"
	// PropCompactDelay is the delay in milliseconds (default ten minutes).
	PropCompactDelay = "lakehold.compact-column-files.delay-ms"
)

// tablePolicy is one kind of self-maintenance.
type tablePolicy struct {
	kind, enabled, delay string
	defaultDelay         time.Duration
	// run does one pass and reports whether the job should run again.
	run func(u *Upkeep, ctx context.Context, w *store.Warehouse, id ident.Ident, props map[string]string) (again bool, err error)
}

// tablePolicies lists the policies (a function: the policies run commits,
// which enqueue policy jobs, so a variable would initialise itself).
func tablePolicies() []tablePolicy {
	return []tablePolicy{
		{kind: JobExpireSnapshots, enabled: PropExpireEnabled, delay: PropExpireDelay, defaultDelay: time.Hour, run: (*Upkeep).policyExpire},
		{kind: JobRemoveOrphanFiles, enabled: PropOrphanEnabled, delay: PropOrphanDelay, defaultDelay: 24 * time.Hour, run: (*Upkeep).policyOrphans},
		{kind: JobCompactColumnFiles, enabled: PropCompactEnabled, delay: PropCompactDelay, defaultDelay: 10 * time.Minute, run: (*Upkeep).policyCompact},
	}
}

// policy reads a maintenance property: the table's, else its warehouse's.
func policy(w *store.Warehouse, props map[string]string, key string) string {
	if v, ok := props[key]; ok {
		return v
	}
	return w.Properties[key]
}

func policyOn(w *store.Warehouse, props map[string]string, key string) bool {
	on, _ := strconv.ParseBool(policy(w, props, key))
	return on
}

func policyMillis(w *store.Warehouse, props map[string]string, key string, def time.Duration) time.Duration {
	if ms, err := strconv.ParseInt(policy(w, props, key), 10, 64); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

type policyArgs struct {
	Warehouse string   `json:"warehouse"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	TableUUID string   `json:"table-uuid"`
}

// PolicyJobs are the jobs a commit that lands on table id, whose new
// metadata is meta, enqueues: one per policy that is on.
func PolicyJobs(now time.Time, w *store.Warehouse, id ident.Ident, meta table.Metadata) []store.Job {
	var jobs []store.Job
	props := meta.Properties()
	for _, p := range tablePolicies() {
		if !policyOn(w, props, p.enabled) {
			continue
		}
		uuid := meta.TableUUID().String()
		raw, _ := json.Marshal(policyArgs{Warehouse: w.Name, Namespace: id.Namespace, Name: id.Name, TableUUID: uuid}) // cannot fail
		jobs = append(jobs, store.Job{Kind: p.kind, Args: raw, Warehouse: w.Name, Table: id.String(), TableUUID: uuid,
			Unique: true, RunAt: now.Add(policyMillis(w, props, p.delay, p.defaultDelay))})
	}
	return jobs
}

// jobPrincipal is who a scheduled job acts as: the operator, as
// `catalog maintain` does. Setting the policy needed table-write-metadata.
var jobPrincipal = identity.Principal{Source: identity.SourceLocal, Subject: "jobs"}

// policyHandler is the job handler of p.
func (u *Upkeep) policyHandler(p tablePolicy) store.JobHandler {
	return func(ctx context.Context, j *store.JobInfo) error {
		var a policyArgs
		if err := json.Unmarshal(j.Args, &a); err != nil || a.Name == "" {
			return errors.New(p.kind + ": malformed job arguments")
		}
		ctx = identity.With(ctx, jobPrincipal)
		id := ident.Ident{Namespace: a.Namespace, Name: a.Name}
		w, err := u.d.Tables.Warehouse(ctx, a.Warehouse)
		if err != nil {
			return SkipGone(p.kind, err)
		}
		_, e, err := u.d.Tables.ReadTable(ctx, w.Name, id)
		if err != nil {
			return SkipGone(p.kind, err)
		}
		props := e.Meta.Properties()
		if e.Meta.TableUUID().String() != a.TableUUID || !policyOn(w, props, p.enabled) {
			return nil
		}
		again, err := p.run(u, ctx, w, id, props)
		if err != nil {
			return errors.New(p.kind + ": " + clientText(err))
		}
		if again {
			return &store.JobSnooze{After: max(policyMillis(w, props, p.delay, p.defaultDelay), time.Minute)}
		}
		return nil
	}
}

// policyExpire runs the table's expiry; it runs again while more than one
// snapshot remains (a younger one may expire later).
func (u *Upkeep) policyExpire(ctx context.Context, w *store.Warehouse, id ident.Ident, props map[string]string) (bool, error) {
	if maintenance.GCDisabled(props) {
		u.d.Tables.Logger().InfoContext(ctx, "scheduled snapshot expiry skipped: the table has gc.enabled=false", "table", id.String())
		return false, nil
	}
	rep, err := u.d.Maint.Maintain(ctx, w.Name, id, maintenance.MaintainOptions{})
	if err != nil {
		return false, err
	}
	u.d.Tables.Logger().InfoContext(ctx, "scheduled snapshot expiry", "table", id.String(), "expired", len(rep.ExpiredSnapshots),
		"deleted_files", len(rep.DeletedFiles), "failed_files", rep.FailedFiles)
	_, e, err := u.d.Tables.ReadTable(ctx, w.Name, id)
	return err == nil && len(e.Meta.Snapshots()) > 1, nil
}

// policyOrphans removes the table's orphan files; it always runs again
// (files may be orphaned at any time).
func (u *Upkeep) policyOrphans(ctx context.Context, w *store.Warehouse, id ident.Ident, props map[string]string) (bool, error) {
	if maintenance.GCDisabled(props) {
		// The policy asks for a removal the table's properties forbid:
		// nothing to do, and no failure of the job.
		u.d.Tables.Logger().InfoContext(ctx, "scheduled orphan removal skipped: the table has gc.enabled=false", "table", id.String())
		return false, nil
	}
	age := max(policyMillis(w, props, PropOrphanAge, maintenance.DefaultOrphanAge), maintenance.MinOrphanAge)
	_, err := u.d.Maint.RemoveOrphanFiles(ctx, w.Name, id, maintenance.OrphanOptions{OlderThan: u.d.Tables.Now().Add(-age)})
	return err == nil, err
}

// policyCompact folds the bases the table's thresholds pick; a table that
// is not (or no longer) format version 4 has nothing to fold. It does not
// run again by itself: only commits add column files.
func (u *Upkeep) policyCompact(ctx context.Context, w *store.Warehouse, id ident.Ident, _ map[string]string) (bool, error) {
	if _, e, err := u.d.Tables.ReadTable(ctx, w.Name, id); err != nil || e.Version != v4commits.FormatV4 {
		return false, err
	}
	rep, err := u.d.V4.Compact(ctx, w.Name, id, v4commits.CompactOptions{})
	if err != nil {
		return false, err
	}
	failed := 0
	for _, f := range rep.Folds {
		if f.Error != "" {
			failed++
		}
	}
	u.d.Tables.Logger().InfoContext(ctx, "scheduled compaction", "table", id.String(), "candidates", len(rep.Plan.Candidates), "folds", len(rep.Folds), "failed", failed)
	if failed > 0 {
		return false, fault.New(fault.Internal, "%d of %d folds failed (see the catalog log)", failed, len(rep.Folds))
	}
	return false, nil
}
