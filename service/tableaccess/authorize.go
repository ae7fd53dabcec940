package tableaccess

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// Authorize checks that the caller in ctx holds priv on r: nil when it
// does, a refusal (fault.Refused) when it does not, any other error when
// it cannot tell.
func (a *Access) Authorize(ctx context.Context, priv access.Privilege, r access.Resource) error {
	return a.opts.Authorizer.Authorize(ctx, identity.From(ctx), priv, r)
}

// AuthorizeTable is Authorize on table id in warehouse.
func (a *Access) AuthorizeTable(ctx context.Context, priv access.Privilege, warehouse string, id ident.Ident) error {
	return a.Authorize(ctx, priv, access.TableResource(warehouse, id.Namespace, id.Name))
}

// AuthorizeLoad authorizes reading one table or view. A caller refused
// (403) on a name that does not exist gets the 404 an allowed caller would:
// engines probe names before they create (Trino loads a view of the name a
// table is about to take), and a 403 there breaks them. The 403 case only
// arises for a caller who may see the namespace, so existence is no secret
// to it; a caller who may see nothing there already gets 404.
func (a *Access) AuthorizeLoad(ctx context.Context, priv access.Privilege, kind store.ObjectKind, warehouse string, id ident.Ident) error {
	res := access.TableResource(warehouse, id.Namespace, id.Name)
	if kind == store.KindView {
		res = access.ViewResource(warehouse, id.Namespace, id.Name)
	}
	err := a.Authorize(ctx, priv, res)
	if fault.KindOf(err) != fault.Forbidden {
		return err
	}
	_, lookErr := a.opts.Store.ObjectMetadataLocation(ctx, ObjectRef(id, warehouse, kind))
	if errors.Is(lookErr, store.ErrNotFound) {
		if kind == store.KindView {
			return ident.ViewNotFound(lookErr, id)
		}
		return ident.TableNotFound(lookErr, id)
	}
	return err
}

// WriteTarget checks id, authorizes priv on the table and returns its
// warehouse: 400 for a bad identifier, 403 when denied, 404 for an
// unknown warehouse.
func (a *Access) WriteTarget(ctx context.Context, warehouse string, id ident.Ident, priv access.Privilege) (*store.Warehouse, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := a.AuthorizeTable(ctx, priv, warehouse, id); err != nil {
		return nil, err
	}
	return a.Warehouse(ctx, warehouse)
}

// CreateTarget checks a new object's identifier, authorizes priv on its
// namespace and returns the warehouse and namespace: 400 for a bad
// identifier, 404 when the warehouse or namespace is missing (or hidden),
// 403 when denied, the store's error when it fails.
func (a *Access) CreateTarget(ctx context.Context, warehouse string, id ident.Ident, priv access.Privilege) (*store.Warehouse, *store.Namespace, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, nil, err
	}
	if err := a.Authorize(ctx, priv, access.NamespaceResource(warehouse, id.Namespace)); err != nil {
		return nil, nil, err
	}
	w, err := a.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, nil, err
	}
	ns, err := a.opts.Store.NamespaceGet(ctx, warehouse, id.Namespace)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, nil, ident.NamespaceNotFound(err, id.Namespace)
	} else if err != nil {
		return nil, nil, storefault.Of(err, warehouse)
	}
	return w, ns, nil
}

// ListVisibility decides a listing under container: nil when the caller
// holds priv on it (it sees everything), else the names the authorizer
// lets it see (when the authorizer filters listings: access.ListFilter).
// The refusal of Authorize when the authorizer does not filter; an error
// when it refuses but filters nothing.
func (a *Access) ListVisibility(ctx context.Context, priv access.Privilege, container access.Resource) (*store.Visibility, error) {
	err := a.Authorize(ctx, priv, container)
	if err == nil || fault.KindOf(err) != fault.Forbidden {
		return nil, err
	}
	f, ok := a.opts.Authorizer.(access.ListFilter)
	if !ok {
		return nil, err
	}
	v := f.Visibility(identity.From(ctx))
	if v == nil {
		return nil, fmt.Errorf("authorizer denied %s but filters nothing: %w", priv, err)
	}
	return v, nil
}
