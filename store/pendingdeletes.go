package store

import (
	"context"
	"time"
)

// PendingDelete is a file a snapshot expiry deletes once the commit that
// removes SnapshotIDs has landed: written before that commit, removed once
// the file is gone (or once it is known that the commit did not land).
type PendingDelete struct {
	TableUUID   string
	Location    string
	SnapshotIDs []int64
	CreatedAt   time.Time
}

// PendingDeletes persists the clean-up queue of snapshot expiry, so that a
// clean-up cut short is finished by the next run. Errors are ErrUnavailable
// when the database is out of reach and ErrDatabase otherwise.
type PendingDeletes interface {
	// AddPendingDeletes records rows in one transaction; a row for a
	// location already queued for the table replaces it.
	AddPendingDeletes(ctx context.Context, rows []PendingDelete) error
	// ListPendingDeletes returns a table's queued rows, oldest first.
	ListPendingDeletes(ctx context.Context, tableUUID string) ([]PendingDelete, error)
	// RemovePendingDeletes drops the named rows of a table; missing rows
	// are not an error.
	RemovePendingDeletes(ctx context.Context, tableUUID string, locations []string) error
}
