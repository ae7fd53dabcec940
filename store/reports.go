package store

import (
	"context"
	"encoding/json"
	"time"
)

// Report is one metrics report an engine sent for a table (a scan or a
// commit), as stored: the body is the checked report, never a request
// header or a credential.
type Report struct {
	// ID is assigned when the report is stored; it grows with each report.
	ID int64
	// TableID is the id of the table's row: renames keep its reports.
	TableID string
	// Type is "scan-report" or "commit-report".
	Type string
	// ReceivedAt is when the catalog stored it (the database's clock).
	ReceivedAt time.Time
	// SnapshotID is the snapshot the report is about.
	SnapshotID int64
	// Body is the report document, JSON.
	Body json.RawMessage
}

// ReportFilter narrows ReportList; zero fields match every report.
type ReportFilter struct {
	// Type keeps reports of this type only.
	Type string
	// Since keeps reports received at or after this time.
	Since time.Time
}

// Reports keeps engines' metrics reports per table. A table's reports are
// removed with the table when it goes for good (ObjectDelete,
// ObjectDeleteIf, a replacing ObjectReplace, DeletedRemove), in the same
// transaction; a soft-deleted table keeps them until then. Errors are
// ErrUnavailable when the database is out of reach, ErrDatabase otherwise.
type Reports interface {
	// ReportAdd stores r for the live table ref names and fills in r.ID,
	// r.TableID and r.ReceivedAt: ErrNotFound when there is no such table.
	ReportAdd(ctx context.Context, ref ObjectRef, r *Report) error
	// ReportList returns the live table's reports matching f, newest
	// first (by receipt, then id), up to page.Size (100 when 0), and the
	// token of the next page ("" after the last): ErrNotFound when there
	// is no such table, ErrInvalidPageToken for a token not issued here.
	ReportList(ctx context.Context, ref ObjectRef, f ReportFilter, page Page) ([]*Report, string, error)
	// PruneReports removes the reports received before before, those of
	// tables that exist neither live nor soft-deleted (a report that
	// raced its table's removal) and, when keep > 0, all but the newest
	// keep of each table and type (by receipt, then id), and returns how
	// many. It deletes in bounded batches, each its own statement, so
	// that writers wait for one batch at most; on an error the count is
	// that of the batches that completed (and are gone for good).
	PruneReports(ctx context.Context, before time.Time, keep int) (int64, error)
}
