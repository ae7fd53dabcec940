package tables

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// List lists the names of one kind of object (table, view or function) in
// a namespace that the caller may see: all of them with the kind's list
// privilege (table-list; view-read for views and functions) on the
// namespace or a container, else those it holds a privilege on. 404 when
// the namespace is missing or hidden, 400 for an invalid namespace, the
// store's 503.
func (t *Tables) List(ctx context.Context, warehouse string, nsLevels []string, kind store.ObjectKind, page store.Page) ([]string, string, error) {
	if err := ident.ValidateNamespace(nsLevels); err != nil {
		return nil, "", err
	}
	priv := access.PrivTableList
	if kind != store.KindTable {
		priv = access.PrivViewRead
	}
	vis, err := t.ta.ListVisibility(ctx, priv, access.NamespaceResource(warehouse, nsLevels))
	if err != nil {
		return nil, "", err
	}
	page.Visible = vis
	names, next, err := t.store.ObjectList(ctx, warehouse, nsLevels, kind, page)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, "", ident.NamespaceNotFound(err, nsLevels)
	}
	return names, next, storefault.Of(err, warehouse)
}

// Rename renames a table or a view, possibly into another namespace of the
// same warehouse. 404 NoSuchTable or NoSuchView for a missing source, 404
// NoSuchNamespace for a missing destination namespace, 409 when the
// destination name is taken.
func (t *Tables) Rename(ctx context.Context, warehouse string, kind store.ObjectKind, from, to ident.Ident) error {
	if err := ident.ValidateIdent(from); err != nil {
		return err
	}
	if err := ident.ValidateIdent(to); err != nil {
		return err
	}
	// A rename drops the object where it is and creates it where it goes.
	drop, create, res := access.PrivTableDrop, access.PrivTableCreate, access.TableResource(warehouse, from.Namespace, from.Name)
	if kind == store.KindView {
		drop, create, res = access.PrivViewDrop, access.PrivViewCreate, access.ViewResource(warehouse, from.Namespace, from.Name)
	}
	if err := t.ta.Authorize(ctx, drop, res); err != nil {
		return err
	}
	if err := t.ta.Authorize(ctx, create, access.NamespaceResource(warehouse, to.Namespace)); err != nil {
		return err
	}
	ectx := ctx
	if t.ta.EventsOn() {
		// The event names the object's UUID, read first; a rename of an
		// object that is gone by then fails in the store below.
		if obj, gerr := t.store.ObjectGetRefs(ctx, tableaccess.ObjectRef(from, warehouse, kind)); gerr == nil {
			ectx = store.WithEvents(ctx, changeevents.Rename(tableaccess.ObjectOf(obj), tableaccess.Who(ctx), to.Namespace, to.Name))
		}
	}
	err := t.store.ObjectRename(ectx, tableaccess.ObjectRef(from, warehouse, kind), to.Namespace, to.Name)
	var ae *store.AlreadyExistsError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNoSuchTable):
		return ident.TableNotFound(err, from)
	case errors.Is(err, store.ErrNoSuchView):
		return ident.ViewNotFound(err, from)
	case errors.Is(err, store.ErrNoSuchNamespace):
		return ident.NamespaceNotFound(err, to.Namespace)
	case errors.As(err, &ae):
		what := "Table"
		switch ae.Kind {
		case store.KindView:
			what = "View"
		case store.KindFunction:
			what = "Function"
		}
		return fault.Wrap(fault.AlreadyExists, err, "Cannot rename %s to %s. %s already exists", from, to, what)
	}
	return storefault.Of(err, warehouse)
}
