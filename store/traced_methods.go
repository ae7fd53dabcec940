package store

import (
	"context"
	"time"
)

// The traced methods: one span per call of every Store method that takes
// a context (traced.go). traced_test.go fails when a method of Store is
// missing here, so that a new one cannot pass through untraced.

func (t *traced) PrincipalCreate(ctx context.Context, p *Principal) error {
	ctx, span := t.start(ctx, "PrincipalCreate")
	return t.end(span, t.Store.PrincipalCreate(ctx, p))
}

func (t *traced) PrincipalGet(ctx context.Context, name string) (*Principal, error) {
	ctx, span := t.start(ctx, "PrincipalGet")
	v, err := t.Store.PrincipalGet(ctx, name)
	return v, t.end(span, err)
}

func (t *traced) PrincipalByClientID(ctx context.Context, clientID string) (*Principal, error) {
	ctx, span := t.start(ctx, "PrincipalByClientID")
	v, err := t.Store.PrincipalByClientID(ctx, clientID)
	return v, t.end(span, err)
}

func (t *traced) PrincipalList(ctx context.Context, page Page) ([]*Principal, string, error) {
	ctx, span := t.start(ctx, "PrincipalList")
	r0, r1, err := t.Store.PrincipalList(ctx, page)
	return r0, r1, t.end(span, err)
}

func (t *traced) PrincipalRotate(ctx context.Context, name string, secretHash string) (*Principal, error) {
	ctx, span := t.start(ctx, "PrincipalRotate")
	v, err := t.Store.PrincipalRotate(ctx, name, secretHash)
	return v, t.end(span, err)
}

func (t *traced) PrincipalDelete(ctx context.Context, name string) error {
	ctx, span := t.start(ctx, "PrincipalDelete")
	return t.end(span, t.Store.PrincipalDelete(ctx, name))
}

func (t *traced) RoleCreate(ctx context.Context, r *Role) error {
	ctx, span := t.start(ctx, "RoleCreate")
	return t.end(span, t.Store.RoleCreate(ctx, r))
}

func (t *traced) RoleGet(ctx context.Context, name string) (*Role, error) {
	ctx, span := t.start(ctx, "RoleGet")
	v, err := t.Store.RoleGet(ctx, name)
	return v, t.end(span, err)
}

func (t *traced) RoleList(ctx context.Context) ([]*Role, error) {
	ctx, span := t.start(ctx, "RoleList")
	v, err := t.Store.RoleList(ctx)
	return v, t.end(span, err)
}

func (t *traced) RoleDelete(ctx context.Context, name string) error {
	ctx, span := t.start(ctx, "RoleDelete")
	return t.end(span, t.Store.RoleDelete(ctx, name))
}

func (t *traced) GrantAdd(ctx context.Context, role string, g Grant) error {
	ctx, span := t.start(ctx, "GrantAdd")
	return t.end(span, t.Store.GrantAdd(ctx, role, g))
}

func (t *traced) GrantRevoke(ctx context.Context, role string, g Grant) error {
	ctx, span := t.start(ctx, "GrantRevoke")
	return t.end(span, t.Store.GrantRevoke(ctx, role, g))
}

func (t *traced) GrantList(ctx context.Context, role string) ([]Grant, error) {
	ctx, span := t.start(ctx, "GrantList")
	v, err := t.Store.GrantList(ctx, role)
	return v, t.end(span, err)
}

func (t *traced) AssignmentAdd(ctx context.Context, role string, a Assignee) error {
	ctx, span := t.start(ctx, "AssignmentAdd")
	return t.end(span, t.Store.AssignmentAdd(ctx, role, a))
}

func (t *traced) AssignmentRemove(ctx context.Context, role string, a Assignee) error {
	ctx, span := t.start(ctx, "AssignmentRemove")
	return t.end(span, t.Store.AssignmentRemove(ctx, role, a))
}

func (t *traced) AssignmentList(ctx context.Context, role string) ([]Assignee, error) {
	ctx, span := t.start(ctx, "AssignmentList")
	v, err := t.Store.AssignmentList(ctx, role)
	return v, t.end(span, err)
}

func (t *traced) CheckAccess(ctx context.Context, q AccessQuery) (Access, error) {
	ctx, span := t.start(ctx, "CheckAccess")
	v, err := t.Store.CheckAccess(ctx, q)
	return v, t.end(span, err)
}

func (t *traced) AppendAudit(ctx context.Context, events []AuditEvent) error {
	ctx, span := t.start(ctx, "AppendAudit")
	return t.end(span, t.Store.AppendAudit(ctx, events))
}

func (t *traced) ListAudit(ctx context.Context, f AuditFilter, page Page) ([]AuditEvent, string, error) {
	ctx, span := t.start(ctx, "ListAudit")
	r0, r1, err := t.Store.ListAudit(ctx, f, page)
	return r0, r1, t.end(span, err)
}

func (t *traced) AddPendingDeletes(ctx context.Context, rows []PendingDelete) error {
	ctx, span := t.start(ctx, "AddPendingDeletes")
	return t.end(span, t.Store.AddPendingDeletes(ctx, rows))
}

func (t *traced) ListPendingDeletes(ctx context.Context, tableUUID string) ([]PendingDelete, error) {
	ctx, span := t.start(ctx, "ListPendingDeletes")
	v, err := t.Store.ListPendingDeletes(ctx, tableUUID)
	return v, t.end(span, err)
}

func (t *traced) RemovePendingDeletes(ctx context.Context, tableUUID string, locations []string) error {
	ctx, span := t.start(ctx, "RemovePendingDeletes")
	return t.end(span, t.Store.RemovePendingDeletes(ctx, tableUUID, locations))
}

func (t *traced) FileIndexLeaves(ctx context.Context, tableID string, leaves []string) (map[string]string, error) {
	ctx, span := t.start(ctx, "FileIndexLeaves")
	v, err := t.Store.FileIndexLeaves(ctx, tableID, leaves)
	return v, t.end(span, err)
}

func (t *traced) FileIndexLookup(ctx context.Context, tableID string, locations []string) ([]IndexEntry, error) {
	ctx, span := t.start(ctx, "FileIndexLookup")
	v, err := t.Store.FileIndexLookup(ctx, tableID, locations)
	return v, t.end(span, err)
}

func (t *traced) FileIndexAdd(ctx context.Context, tableID string, leaves []IndexedLeaf) error {
	ctx, span := t.start(ctx, "FileIndexAdd")
	return t.end(span, t.Store.FileIndexAdd(ctx, tableID, leaves))
}

func (t *traced) FileIndexForgetLeaves(ctx context.Context, tableID string, leaves []string) error {
	ctx, span := t.start(ctx, "FileIndexForgetLeaves")
	return t.end(span, t.Store.FileIndexForgetLeaves(ctx, tableID, leaves))
}

func (t *traced) WarehouseCreate(ctx context.Context, w *Warehouse) error {
	ctx, span := t.start(ctx, "WarehouseCreate")
	return t.end(span, t.Store.WarehouseCreate(ctx, w))
}

func (t *traced) WarehouseGet(ctx context.Context, name string) (*Warehouse, error) {
	ctx, span := t.start(ctx, "WarehouseGet")
	v, err := t.Store.WarehouseGet(ctx, name)
	return v, t.end(span, err)
}

func (t *traced) WarehouseList(ctx context.Context) ([]*Warehouse, error) {
	ctx, span := t.start(ctx, "WarehouseList")
	v, err := t.Store.WarehouseList(ctx)
	return v, t.end(span, err)
}

func (t *traced) WarehouseSetProfile(ctx context.Context, name string, profile string) error {
	ctx, span := t.start(ctx, "WarehouseSetProfile")
	return t.end(span, t.Store.WarehouseSetProfile(ctx, name, profile))
}

func (t *traced) WarehouseDelete(ctx context.Context, name string) error {
	ctx, span := t.start(ctx, "WarehouseDelete")
	return t.end(span, t.Store.WarehouseDelete(ctx, name))
}

func (t *traced) NamespaceCreate(ctx context.Context, warehouse string, levels []string, props map[string]string) (*Namespace, error) {
	ctx, span := t.start(ctx, "NamespaceCreate")
	v, err := t.Store.NamespaceCreate(ctx, warehouse, levels, props)
	return v, t.end(span, err)
}

func (t *traced) NamespaceGet(ctx context.Context, warehouse string, levels []string) (*Namespace, error) {
	ctx, span := t.start(ctx, "NamespaceGet")
	v, err := t.Store.NamespaceGet(ctx, warehouse, levels)
	return v, t.end(span, err)
}

func (t *traced) NamespaceList(ctx context.Context, warehouse string, parent []string, page Page) ([][]string, string, error) {
	ctx, span := t.start(ctx, "NamespaceList")
	r0, r1, err := t.Store.NamespaceList(ctx, warehouse, parent, page)
	return r0, r1, t.end(span, err)
}

func (t *traced) NamespaceUpdateProperties(ctx context.Context, warehouse string, levels []string, removals []string, updates map[string]string) ([]string, []string, error) {
	ctx, span := t.start(ctx, "NamespaceUpdateProperties")
	r0, r1, err := t.Store.NamespaceUpdateProperties(ctx, warehouse, levels, removals, updates)
	return r0, r1, t.end(span, err)
}

func (t *traced) NamespaceDelete(ctx context.Context, warehouse string, levels []string) error {
	ctx, span := t.start(ctx, "NamespaceDelete")
	return t.end(span, t.Store.NamespaceDelete(ctx, warehouse, levels))
}

func (t *traced) ObjectGet(ctx context.Context, ref ObjectRef) (*Object, error) {
	ctx, span := t.start(ctx, "ObjectGet")
	v, err := t.Store.ObjectGet(ctx, ref)
	return v, t.end(span, err)
}

func (t *traced) ObjectGetRefs(ctx context.Context, ref ObjectRef) (*Object, error) {
	ctx, span := t.start(ctx, "ObjectGetRefs")
	v, err := t.Store.ObjectGetRefs(ctx, ref)
	return v, t.end(span, err)
}

func (t *traced) ObjectMetadataLocation(ctx context.Context, ref ObjectRef) (string, error) {
	ctx, span := t.start(ctx, "ObjectMetadataLocation")
	v, err := t.Store.ObjectMetadataLocation(ctx, ref)
	return v, t.end(span, err)
}

func (t *traced) ObjectList(ctx context.Context, warehouse string, namespace []string, kind ObjectKind, page Page) ([]string, string, error) {
	ctx, span := t.start(ctx, "ObjectList")
	r0, r1, err := t.Store.ObjectList(ctx, warehouse, namespace, kind, page)
	return r0, r1, t.end(span, err)
}

func (t *traced) ObjectCreate(ctx context.Context, o *Object) error {
	ctx, span := t.start(ctx, "ObjectCreate")
	return t.end(span, t.Store.ObjectCreate(ctx, o))
}

func (t *traced) ObjectReplace(ctx context.Context, o *Object) error {
	ctx, span := t.start(ctx, "ObjectReplace")
	return t.end(span, t.Store.ObjectReplace(ctx, o))
}

func (t *traced) ObjectDelete(ctx context.Context, ref ObjectRef) (*Object, error) {
	ctx, span := t.start(ctx, "ObjectDelete")
	v, err := t.Store.ObjectDelete(ctx, ref)
	return v, t.end(span, err)
}

func (t *traced) ObjectDeleteIf(ctx context.Context, ref ObjectRef, check func(*Object) error) (*Object, error) {
	ctx, span := t.start(ctx, "ObjectDeleteIf")
	v, err := t.Store.ObjectDeleteIf(ctx, ref, check)
	return v, t.end(span, err)
}

func (t *traced) ObjectRename(ctx context.Context, from ObjectRef, toNamespace []string, toName string) error {
	ctx, span := t.start(ctx, "ObjectRename")
	return t.end(span, t.Store.ObjectRename(ctx, from, toNamespace, toName))
}

func (t *traced) ObjectsSwap(ctx context.Context, swaps []Swap) error {
	ctx, span := t.start(ctx, "ObjectsSwap")
	return t.end(span, t.Store.ObjectsSwap(ctx, swaps))
}

func (t *traced) IdempotencyBegin(ctx context.Context, c IdempotencyClaim) (*IdempotencyRecord, error) {
	ctx, span := t.start(ctx, "IdempotencyBegin")
	v, err := t.Store.IdempotencyBegin(ctx, c)
	return v, t.end(span, err)
}

func (t *traced) IdempotencyRenew(ctx context.Context, key string, owner string, lease time.Duration) error {
	ctx, span := t.start(ctx, "IdempotencyRenew")
	return t.end(span, t.Store.IdempotencyRenew(ctx, key, owner, lease))
}

func (t *traced) IdempotencyFinish(ctx context.Context, rec *IdempotencyRecord) error {
	ctx, span := t.start(ctx, "IdempotencyFinish")
	return t.end(span, t.Store.IdempotencyFinish(ctx, rec))
}

func (t *traced) IdempotencyAbandon(ctx context.Context, key string, owner string) error {
	ctx, span := t.start(ctx, "IdempotencyAbandon")
	return t.end(span, t.Store.IdempotencyAbandon(ctx, key, owner))
}

// Now reads a local estimate: no span.
func (t *traced) Now() time.Time { return t.Store.Now() }

// ClockOffset reads the last measurement: no span.
func (t *traced) ClockOffset() (time.Duration, bool) { return t.Store.ClockOffset() }

func (t *traced) Ping(ctx context.Context) error {
	ctx, span := t.start(ctx, "Ping")
	return t.end(span, t.Store.Ping(ctx))
}

func (t *traced) ListJobs(ctx context.Context, f JobFilter, page Page) ([]*JobInfo, string, error) {
	ctx, span := t.start(ctx, "ListJobs")
	v, next, err := t.Store.ListJobs(ctx, f, page)
	return v, next, t.end(span, err)
}

func (t *traced) JobStats(ctx context.Context) (JobStats, error) {
	ctx, span := t.start(ctx, "JobStats")
	v, err := t.Store.JobStats(ctx)
	return v, t.end(span, err)
}

// StartWorkers is not a span: the workers outlive any request.
func (t *traced) StartWorkers(ctx context.Context, cfg WorkerConfig) (Workers, error) {
	return t.Store.StartWorkers(ctx, cfg)
}

func (t *traced) ObjectSoftDelete(ctx context.Context, ref ObjectRef, id string, expiresAt time.Time, purge bool) (*DeletedObject, error) {
	ctx, span := t.start(ctx, "ObjectSoftDelete")
	v, err := t.Store.ObjectSoftDelete(ctx, ref, id, expiresAt, purge)
	return v, t.end(span, err)
}

func (t *traced) DeletedList(ctx context.Context, warehouse string, page Page) ([]*DeletedObject, string, error) {
	ctx, span := t.start(ctx, "DeletedList")
	v, next, err := t.Store.DeletedList(ctx, warehouse, page)
	return v, next, t.end(span, err)
}

func (t *traced) DeletedGet(ctx context.Context, warehouse, id string) (*DeletedObject, error) {
	ctx, span := t.start(ctx, "DeletedGet")
	v, err := t.Store.DeletedGet(ctx, warehouse, id)
	return v, t.end(span, err)
}

func (t *traced) Undrop(ctx context.Context, warehouse, id, name string) (*Object, error) {
	ctx, span := t.start(ctx, "Undrop")
	v, err := t.Store.Undrop(ctx, warehouse, id, name)
	return v, t.end(span, err)
}

func (t *traced) DeletedRemove(ctx context.Context, warehouse, id string) (*DeletedObject, error) {
	ctx, span := t.start(ctx, "DeletedRemove")
	v, err := t.Store.DeletedRemove(ctx, warehouse, id)
	return v, t.end(span, err)
}

func (t *traced) ListEvents(ctx context.Context, f EventFilter, limit int) ([]*Event, error) {
	ctx, span := t.start(ctx, "ListEvents")
	v, err := t.Store.ListEvents(ctx, f, limit)
	return v, t.end(span, err)
}

func (t *traced) EventCursor(ctx context.Context, sink string) (EventPos, error) {
	ctx, span := t.start(ctx, "EventCursor")
	v, err := t.Store.EventCursor(ctx, sink)
	return v, t.end(span, err)
}

func (t *traced) SetEventCursor(ctx context.Context, sink string, pos EventPos) error {
	ctx, span := t.start(ctx, "SetEventCursor")
	return t.end(span, t.Store.SetEventCursor(ctx, sink, pos))
}

func (t *traced) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	ctx, span := t.start(ctx, "PruneEvents")
	v, err := t.Store.PruneEvents(ctx, before)
	return v, t.end(span, err)
}

func (t *traced) ReportAdd(ctx context.Context, ref ObjectRef, r *Report) error {
	ctx, span := t.start(ctx, "ReportAdd")
	return t.end(span, t.Store.ReportAdd(ctx, ref, r))
}

func (t *traced) ReportList(ctx context.Context, ref ObjectRef, f ReportFilter, page Page) ([]*Report, string, error) {
	ctx, span := t.start(ctx, "ReportList")
	v, next, err := t.Store.ReportList(ctx, ref, f, page)
	return v, next, t.end(span, err)
}

func (t *traced) PruneReports(ctx context.Context, before time.Time, keep int) (int64, error) {
	ctx, span := t.start(ctx, "PruneReports")
	v, err := t.Store.PruneReports(ctx, before, keep)
	return v, t.end(span, err)
}

func (t *traced) EnqueueJobs(ctx context.Context, jobs ...Job) error {
	ctx, span := t.start(ctx, "EnqueueJobs")
	return t.end(span, t.Store.EnqueueJobs(ctx, jobs...))
}

func (t *traced) ClaimOrphanCandidates(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error) {
	ctx, span := t.start(ctx, "ClaimOrphanCandidates")
	v, err := t.Store.ClaimOrphanCandidates(ctx, objectID, run, locations, lease)
	return v, t.end(span, err)
}

func (t *traced) RenewOrphanCandidates(ctx context.Context, objectID, run string) (int, error) {
	ctx, span := t.start(ctx, "RenewOrphanCandidates")
	v, err := t.Store.RenewOrphanCandidates(ctx, objectID, run)
	return v, t.end(span, err)
}

func (t *traced) ReleaseOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error {
	ctx, span := t.start(ctx, "ReleaseOrphanCandidates")
	return t.end(span, t.Store.ReleaseOrphanCandidates(ctx, objectID, run, locations))
}

func (t *traced) ListOrphanCandidates(ctx context.Context, objectID string) ([]OrphanCandidate, error) {
	ctx, span := t.start(ctx, "ListOrphanCandidates")
	v, err := t.Store.ListOrphanCandidates(ctx, objectID)
	return v, t.end(span, err)
}

func (t *traced) TombstoneOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error {
	ctx, span := t.start(ctx, "TombstoneOrphanCandidates")
	return t.end(span, t.Store.TombstoneOrphanCandidates(ctx, objectID, run, locations))
}

func (t *traced) PruneOrphanTombstones(ctx context.Context, objectID string, before time.Time, limit int) (int, error) {
	ctx, span := t.start(ctx, "PruneOrphanTombstones")
	v, err := t.Store.PruneOrphanTombstones(ctx, objectID, before, limit)
	return v, t.end(span, err)
}

func (t *traced) AdoptOrphanRows(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error) {
	ctx, span := t.start(ctx, "AdoptOrphanRows")
	v, err := t.Store.AdoptOrphanRows(ctx, objectID, run, locations, lease)
	return v, t.end(span, err)
}
