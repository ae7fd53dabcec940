// Package storefault turns the store's sentinel errors into the catalog's
// client-facing faults (internal/fault), for every package that calls the
// store: access control and the orchestration alike.
package storefault

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/store"
)

// MsgStateUnknown is the message of a commit whose outcome is unknown
// (500 CommitStateUnknown).
const MsgStateUnknown = "Commit state unknown: the catalog database failed while committing"

// Of translates store sentinels into client-facing errors for the
// common cases; callers handle the operation-specific ones first. A
// database that is unavailable (store.ErrUnavailable) is 503: nothing was
// written. The store's text never reaches the message.
func Of(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *fault.Error
	if errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, store.ErrOutcomeUnknown):
		// Before the context cases: a write cut short may have landed.
		return fault.Wrap(fault.CommitStateUnknown, err, MsgStateUnknown)
	case errors.Is(err, store.ErrNoSuchWarehouse):
		return fault.Wrap(fault.NoSuchWarehouse, err, "Warehouse does not exist: %s", what)
	case errors.Is(err, store.ErrInvalidPageToken):
		return fault.Wrap(fault.BadRequest, err, "Invalid page token")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fault.Wrap(fault.Unavailable, err, "Request cancelled or timed out")
	case errors.Is(err, store.ErrUnavailable):
		return fault.Wrap(fault.Unavailable, err, "Catalog database unavailable; retry later")
	case errors.Is(err, store.ErrNotHeld):
		return fault.Wrap(fault.Unavailable, err, "A retry of this request took over its Idempotency-Key; this attempt changed nothing")
	case errors.Is(err, store.ErrOrphanHold):
		return fault.Wrap(fault.CommitFailed, err, "An orphan-file removal of this table is deleting files under its location; nothing was changed, retry after it finishes")
	case errors.Is(err, store.ErrInvalidValue):
		return fault.Wrap(fault.BadRequest, err, "Invalid request: a name or value cannot be stored by the catalog database")
	}
	return fault.Wrap(fault.Internal, err, "catalog database error")
}
