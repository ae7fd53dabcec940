package service

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// authorize checks that the caller in ctx holds priv on r.
func (s *Service) authorize(ctx context.Context, priv Privilege, r Resource) error {
	return s.opts.Authorizer.Authorize(ctx, identity.From(ctx), priv, r)
}

// tableResource names a table securable.
func tableResource(warehouse string, id Ident) Resource {
	return access.TableResource(warehouse, id.Namespace, id.Name)
}

// viewResource names a view securable.
func viewResource(warehouse string, id Ident) Resource {
	return access.ViewResource(warehouse, id.Namespace, id.Name)
}

// namespaceResource names a namespace securable.
func namespaceResource(warehouse string, levels []string) Resource {
	return access.NamespaceResource(warehouse, levels)
}

// authorizeLoad authorizes reading one table or view. A caller refused
// (403) on a name that does not exist gets the 404 an allowed caller would:
// engines probe names before they create (Trino loads a view of the name a
// table is about to take), and a 403 there breaks them. The 403 case only
// arises for a caller who may see the namespace, so existence is no secret
// to it; a caller who may see nothing there already gets 404.
func (s *Service) authorizeLoad(ctx context.Context, priv Privilege, kind store.ObjectKind, warehouse string, id Ident) error {
	res := tableResource(warehouse, id)
	if kind == store.KindView {
		res = viewResource(warehouse, id)
	}
	err := s.authorize(ctx, priv, res)
	if fault.KindOf(err) != fault.Forbidden {
		return err
	}
	_, lookErr := s.store.ObjectMetadataLocation(ctx, objRef(id, warehouse, kind))
	if errors.Is(lookErr, store.ErrNotFound) {
		if kind == store.KindView {
			return viewNotFound(lookErr, id)
		}
		return tableNotFound(lookErr, id)
	}
	return err
}
