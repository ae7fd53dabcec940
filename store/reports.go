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
	// PruneReports removes the reports received before before, and those
	// of tables that exist neither live nor soft-deleted (a report that
	// raced its table's removal), and returns how many.
	PruneReports(ctx context.Context, before time.Time) (int64, error)
}
