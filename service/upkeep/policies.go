package upkeep

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/commitjobs"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// policyRun does one pass of a scheduled policy (commitjobs.Policies) on
// table id, whose properties are props, and reports whether the job
// should run again.
type policyRun func(u *Upkeep, ctx context.Context, w *store.Warehouse, id ident.Ident, props map[string]string) (again bool, err error)

// policyRuns are the pass of each policy, by its job kind.
var policyRuns = map[string]policyRun{
	commitjobs.JobExpireSnapshots:    (*Upkeep).policyExpire,
	commitjobs.JobRemoveOrphanFiles:  (*Upkeep).policyOrphans,
	commitjobs.JobCompactColumnFiles: (*Upkeep).policyCompact,
}

// jobPrincipal is who a scheduled job acts as: the operator, as
// `catalog maintain` does. Setting the policy needed table-write-metadata.
var jobPrincipal = identity.Principal{Source: identity.SourceLocal, Subject: "jobs"}

// policyHandler is the job handler of p, whose pass is run.
func (u *Upkeep) policyHandler(p commitjobs.Policy, run policyRun) store.JobHandler {
	return func(ctx context.Context, j *store.JobInfo) error {
		var a commitjobs.PolicyArgs
		if err := json.Unmarshal(j.Args, &a); err != nil || a.Name == "" {
			return errors.New(p.Kind + ": malformed job arguments")
		}
		ctx = identity.With(ctx, jobPrincipal)
		id := ident.Ident{Namespace: a.Namespace, Name: a.Name}
		w, err := u.d.Tables.Warehouse(ctx, a.Warehouse)
		if err != nil {
			return SkipGone(p.Kind, err)
		}
		_, e, err := u.d.Tables.ReadTable(ctx, w.Name, id)
		if err != nil {
			return SkipGone(p.Kind, err)
		}
		props := e.Meta.Properties()
		if e.Meta.TableUUID().String() != a.TableUUID || !p.On(w, props) {
			return nil
		}
		again, err := run(u, ctx, w, id, props)
		if err != nil {
			return errors.New(p.Kind + ": " + clientText(err))
		}
		if again {
			return &store.JobSnooze{After: max(p.DelayOf(w, props), time.Minute)}
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
	age := max(commitjobs.Millis(w, props, commitjobs.PropOrphanAge, maintenance.DefaultOrphanAge), maintenance.MinOrphanAge)
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
