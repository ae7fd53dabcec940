package tableaccess

import (
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// AlreadyExists builds the 409 for a create or register whose name is
// taken; when err says by another kind, the message names that kind.
func AlreadyExists(err error, kind store.ObjectKind, id ident.Ident) error {
	var ae *store.AlreadyExistsError
	if errors.As(err, &ae) && ae.Kind != kind {
		if ae.Kind == store.KindFunction {
			return fault.Wrap(fault.AlreadyExists, err, "Function with same name already exists: %s", id)
		}
		if ae.Kind == store.KindView {
			return fault.Wrap(fault.AlreadyExists, err, "View with same name already exists: %s", id)
		}
		return fault.Wrap(fault.AlreadyExists, err, "Table with same name already exists: %s", id)
	}
	if kind == store.KindView {
		return fault.Wrap(fault.AlreadyExists, err, "View already exists: %s", id)
	}
	if kind == store.KindFunction {
		return fault.Wrap(fault.AlreadyExists, err, "Function already exists: %s", id)
	}
	return fault.Wrap(fault.AlreadyExists, err, "Table already exists: %s", id)
}

// PutErr maps the errors of putting an object under a name: nil for nil,
// 409 for a name taken, 404 for a missing namespace, 400 for a location
// overlapping another object's, the store's mapping otherwise.
func PutErr(err error, kind store.ObjectKind, id ident.Ident, warehouse string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrAlreadyExists):
		return AlreadyExists(err, kind, id)
	case errors.Is(err, store.ErrNoSuchNamespace):
		return ident.NamespaceNotFound(err, id.Namespace)
	case errors.Is(err, store.ErrLocationOverlap):
		// The store's text names both locations: not for clients.
		return fault.Wrap(fault.BadRequest, err, "Location overlaps another table or view")
	}
	return storefault.Of(err, warehouse)
}

// msgClockOffset is the 503 of a replica whose clock is off.
const msgClockOffset = "This catalog replica's clock is %s off the catalog database's; nothing was committed; retry"

// ClockOffset reports how far the catalog database's clock was ahead of
// this process's at the last measurement; ok is false until one succeeded
// (or without a store).
func (a *Access) ClockOffset() (offset time.Duration, ok bool) {
	if a.opts.Store == nil {
		return 0, false
	}
	return a.opts.Store.ClockOffset()
}

// ClockGuard returns a fault.Unavailable error (503: nothing committed,
// retry, on another replica behind a load balancer) when this process's
// clock is more than Options.MaxClockOffset off the database's, and nil
// otherwise, including before the offset has been measured. It runs before
// a commit builds any metadata, since the builder stamps times with the
// process's clock.
func (a *Access) ClockGuard() error {
	off, ok := a.ClockOffset()
	if !ok || off.Abs() <= a.opts.MaxClockOffset {
		return nil
	}
	return fault.New(fault.Unavailable, msgClockOffset, off.Abs().Round(100*time.Millisecond))
}
