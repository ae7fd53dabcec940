// Package reports keeps the metrics reports engines send after a scan or a
// commit (POST .../tables/{table}/metrics): each is checked against the
// REST spec's shapes (internal/metricsreport), stored by table id with
// its credential-like metadata dropped, listed newest first to callers
// who may read the table's metadata (the management route), pruned past
// the retention by an hourly job, and removed with its table (the store
// does that in the table's own removal). With no retention reports are
// checked, counted and dropped. It knows the store and tableaccess,
// nothing of HTTP.
package reports

import (
	"context"
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/metricsreport"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// JobPruneReports removes reports past their retention, hourly.
const JobPruneReports = "prune-reports"

// DefaultPerTable is how many reports of each type a table keeps when
// no cap is given: the newest, by receipt.
const DefaultPerTable = 10000

// One page of reports: 100 unless asked, 1 to 1000.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Reports stores and serves one catalog's metrics reports.
type Reports struct {
	store     store.Store
	tables    *tableaccess.Access // authorize, the clock and the warehouse lookup
	retention time.Duration
	perTable  int // the newest kept of each table and type, by the prune
}

// New returns the reports room over ta's store; retention is how long a
// report is kept (0: reports are not stored), perTable how many of each
// type a table keeps (0: DefaultPerTable). The cap is applied by the
// prune, not on each insert (which stays one cheap statement), so a table
// may hold more until the next prune.
func New(ta *tableaccess.Access, retention time.Duration, perTable int) *Reports {
	if perTable <= 0 {
		perTable = DefaultPerTable
	}
	return &Reports{store: ta.Store(), tables: ta, retention: retention, perTable: perTable}
}

// On reports whether reports are stored (a retention is set).
func (r *Reports) On() bool { return r.retention > 0 }

// Record checks a report posted for table id and stores it when reports
// are on, and returns its type (for the caller's count). Errors: 400 for
// a bad identifier, a malformed report (naming the field) or one whose
// table-name or snapshot-id is not the table's (metricsreport.MatchTable:
// a snapshot expired since is refused too), 413 for a
// report over metricsreport.MaxStored, 403 without table-read-metadata
// (what reading the table needs: reports describe its scans and
// commits), 404 NoSuchTable when it is missing, 503 when the database is
// away.
func (r *Reports) Record(ctx context.Context, warehouse string, id ident.Ident, body []byte) (string, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return "", err
	}
	if err := r.tables.AuthorizeTable(ctx, access.PrivTableReadMetadata, warehouse, id); err != nil {
		return "", err
	}
	rep, err := metricsreport.Check(body)
	if err != nil {
		return "", err
	}
	// The parsed metadata, cached per metadata location (a commit that
	// just landed left its own there); it also answers 404 for a missing
	// table.
	_, meta, err := r.tables.ReadTable(ctx, warehouse, id)
	if err != nil {
		return "", err
	}
	hasSnapshot := func(sid int64) bool { return meta.Meta.SnapshotByID(sid) != nil }
	if err := metricsreport.MatchTable(rep, id.Name, hasSnapshot); err != nil {
		return "", err
	}
	if !r.On() {
		return rep.Type, nil
	}
	ref := tableaccess.ObjectRef(id, warehouse, store.KindTable)
	row := &store.Report{Type: rep.Type, SnapshotID: rep.SnapshotID, Body: rep.Doc}
	if err := r.store.ReportAdd(ctx, ref, row); err != nil {
		return "", tableErr(err, warehouse, id)
	}
	return rep.Type, nil
}

// Query asks for one page of a table's reports.
type Query struct {
	// Type is "scan-report", "commit-report" or "" for both.
	Type string
	// SinceMillis keeps reports received at or after this Unix time in
	// milliseconds (0: all).
	SinceMillis int64
	// PageSize is 1 to MaxPageSize; 0 is DefaultPageSize.
	PageSize  int
	PageToken string
}

// Entry is one stored report.
type Entry = store.Report

// Page is one page of reports, newest first, and the token of the next
// ("" after the last).
type Page struct {
	Reports       []*Entry
	NextPageToken string
}

// List returns one page of table id's reports, newest first. The caller
// needs what loading the table needs (table-read-metadata): without it
// the answer is loadTable's (403, or 404 when the name does not exist).
// Errors: 404 when reports are not stored (retention 0), for a missing
// warehouse or table; 400 for a bad identifier, type, since-ms, page size
// or a token not issued here; 503 when the database is away.
func (r *Reports) List(ctx context.Context, warehouse string, id ident.Ident, q Query) (*Page, error) {
	if !r.On() {
		return nil, fault.New(fault.NotFound, "Metrics reports are not stored on this catalog (--reports-retention 0)")
	}
	if err := checkQuery(q); err != nil {
		return nil, err
	}
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if _, err := r.tables.Warehouse(ctx, warehouse); err != nil {
		return nil, err
	}
	if err := r.tables.AuthorizeLoad(ctx, access.PrivTableReadMetadata, store.KindTable, warehouse, id); err != nil {
		return nil, err
	}
	f := store.ReportFilter{Type: q.Type}
	if q.SinceMillis > 0 {
		f.Since = time.UnixMilli(q.SinceMillis)
	}
	size := q.PageSize
	if size == 0 {
		size = DefaultPageSize
	}
	rows, next, err := r.store.ReportList(ctx, tableaccess.ObjectRef(id, warehouse, store.KindTable), f,
		store.Page{Token: q.PageToken, Size: size})
	if err != nil {
		return nil, tableErr(err, warehouse, id)
	}
	return &Page{Reports: rows, NextPageToken: next}, nil
}

// checkQuery answers 400 for a type other than the two, a negative
// since-ms and a page size outside 1 to MaxPageSize (0 is "not given").
func checkQuery(q Query) error {
	if q.Type != "" && q.Type != metricsreport.TypeScan && q.Type != metricsreport.TypeCommit {
		return fault.New(fault.BadRequest, "Invalid type: expected scan-report or commit-report")
	}
	if q.SinceMillis < 0 {
		return fault.New(fault.BadRequest, "Invalid since-ms: %d (a Unix time in milliseconds)", q.SinceMillis)
	}
	if q.PageSize < 0 || q.PageSize > MaxPageSize {
		return fault.New(fault.BadRequest, "Invalid page-size: %d (1 to %d)", q.PageSize, MaxPageSize)
	}
	return nil
}

// tableErr maps a store error of a table's reports: a missing table is
// 404 NoSuchTable, the rest as storefault says.
func tableErr(err error, warehouse string, id ident.Ident) error {
	if errors.Is(err, store.ErrNotFound) {
		return ident.TableNotFound(err, id)
	}
	return storefault.Of(err, warehouse)
}

// Jobs are the jobs reports need on any replica that runs workers: the
// hourly prune (unique, so enqueueing it again is a no-op); none when
// reports are off.
func (r *Reports) Jobs() []store.Job {
	if !r.On() {
		return nil
	}
	return []store.Job{{Kind: JobPruneReports, Unique: true}}
}

// Handlers adds the handlers of Jobs to h. The handler is there with
// reports off too, so that a prune another replica enqueued still runs
// here (it then removes nothing: a replica started with no retention
// must not erase what the others keep).
func (r *Reports) Handlers(h map[string]store.JobHandler) {
	h[JobPruneReports] = r.runPrune
}

// runPrune removes reports past the retention or the per-table cap (and
// any that outlived their table), then runs again in an hour; with reports off it removes
// nothing (Prune).
func (r *Reports) runPrune(ctx context.Context, _ *store.JobInfo) error {
	if _, err := r.Prune(ctx); err != nil {
		return errors.New("prune-reports: " + fault.ClientText(err))
	}
	return &store.JobSnooze{After: time.Hour}
}

// Prune removes the reports received before the retention's cut-off,
// those of tables that are gone and all but the newest perTable of each
// table and type, and returns how many went; with reports off it removes
// nothing. 503 when the database is away (what went before the failure
// stays gone).
func (r *Reports) Prune(ctx context.Context) (int64, error) {
	if !r.On() {
		return 0, nil // no retention here: never everything
	}
	n, err := r.store.PruneReports(ctx, r.tables.Now().Add(-r.retention), r.perTable)
	if err != nil {
		return 0, storefault.Of(err, "reports")
	}
	return n, nil
}
