package service

import (
	"context"
	"errors"
	"slices"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// CreateNamespace creates a namespace. Its parent must exist (404
// otherwise); 409 AlreadyExists when it exists.
func (s *Service) CreateNamespace(ctx context.Context, warehouse string, levels []string, props map[string]string) (*Namespace, error) {
	if err := ident.ValidateNamespace(levels); err != nil {
		return nil, err
	}
	if err := s.ta.Authorize(ctx, PrivNamespaceCreate, access.NamespaceResource(warehouse, levels[:len(levels)-1])); err != nil {
		return nil, err
	}
	if props == nil {
		props = map[string]string{}
	}
	ectx := s.ta.WithEvent(ctx, func() store.Event {
		return changeevents.NamespaceCreated(warehouse, levels, tableaccess.Who(ctx), props)
	})
	ns, err := s.store.NamespaceCreate(ectx, warehouse, levels, props)
	switch {
	case errors.Is(err, store.ErrAlreadyExists):
		return nil, fault.Wrap(fault.AlreadyExists, err, "Namespace already exists: %s", ident.NamespaceString(levels))
	case errors.Is(err, store.ErrNoSuchNamespace):
		return nil, fault.Wrap(fault.NoSuchNamespace, err, "Namespace does not exist: %s", ident.NamespaceString(levels[:len(levels)-1]))
	}
	return namespaceOf(ns), storefault.Of(err, warehouse)
}

// LoadNamespace returns a namespace and its properties: 404 when missing
// or hidden from the caller, 403 without namespace-list on it.
func (s *Service) LoadNamespace(ctx context.Context, warehouse string, levels []string) (*Namespace, error) {
	if err := ident.ValidateNamespace(levels); err != nil {
		return nil, err
	}
	if err := s.ta.Authorize(ctx, PrivNamespaceList, access.NamespaceResource(warehouse, levels)); err != nil {
		return nil, err
	}
	ns, err := s.store.NamespaceGet(ctx, warehouse, levels)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, ident.NamespaceNotFound(err, levels)
	}
	return namespaceOf(ns), storefault.Of(err, warehouse)
}

// ListNamespaces lists the direct children of parent (top level when
// empty) the caller may see: all of them with namespace-list on parent or
// a container, else those it holds a privilege on, on a container of or
// below. 404 when parent is missing or hidden from the caller.
func (s *Service) ListNamespaces(ctx context.Context, warehouse string, parent []string, page Page) ([][]string, string, error) {
	vis, err := s.ta.ListVisibility(ctx, PrivNamespaceList, access.NamespaceResource(warehouse, parent))
	if err != nil {
		return nil, "", err
	}
	sp := page.store()
	sp.Visible = vis
	out, next, err := s.store.NamespaceList(ctx, warehouse, parent, sp)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, "", ident.NamespaceNotFound(err, parent)
	}
	return out, next, storefault.Of(err, warehouse)
}

// UpdateNamespaceProperties removes then sets properties. 422 when a key is
// both removed and updated; 404 when the namespace is missing.
func (s *Service) UpdateNamespaceProperties(ctx context.Context, warehouse string, levels []string, removals []string, updates map[string]string) (updated, removed, missing []string, err error) {
	if err := ident.ValidateNamespace(levels); err != nil {
		return nil, nil, nil, err
	}
	for _, k := range removals {
		if _, ok := updates[k]; ok {
			return nil, nil, nil, fault.New(fault.Unprocessable, "Duplicate key to update and remove: %s", k)
		}
	}
	if err := s.ta.Authorize(ctx, PrivNamespaceProperties, access.NamespaceResource(warehouse, levels)); err != nil {
		return nil, nil, nil, err
	}
	updated = make([]string, 0, len(updates))
	for k := range updates {
		updated = append(updated, k)
	}
	slices.Sort(updated)
	removed, missing, err = s.store.NamespaceUpdateProperties(s.namespaceUpdateEvent(ctx, warehouse, levels, updated, removals), warehouse, levels, removals, updates)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, nil, nil, ident.NamespaceNotFound(err, levels)
	}
	if err != nil {
		return nil, nil, nil, storefault.Of(err, warehouse)
	}
	return updated, removed, missing, nil
}

// namespaceUpdateEvent returns ctx carrying the event of a property
// update. Which removals are missing is read before the update: a
// concurrent update of the same keys can make the event's removed and
// missing lists differ from the answer's.
func (s *Service) namespaceUpdateEvent(ctx context.Context, warehouse string, levels, updated, removals []string) context.Context {
	if !s.ta.EventsOn() {
		return ctx
	}
	var removed, missing []string
	props := map[string]string{}
	if cur, err := s.store.NamespaceGet(ctx, warehouse, levels); err == nil {
		props = cur.Properties
	}
	for _, k := range removals {
		if _, ok := props[k]; !ok {
			missing = append(missing, k)
		} else {
			removed = append(removed, k)
		}
	}
	return store.WithEvents(ctx, changeevents.NamespaceUpdated(warehouse, levels, tableaccess.Who(ctx), updated, removed, missing))
}

// DropNamespace drops an empty namespace: 404 when missing, 409 when it
// holds tables, views or child namespaces.
func (s *Service) DropNamespace(ctx context.Context, warehouse string, levels []string) error {
	if err := ident.ValidateNamespace(levels); err != nil {
		return err
	}
	if err := s.ta.Authorize(ctx, PrivNamespaceDrop, access.NamespaceResource(warehouse, levels)); err != nil {
		return err
	}
	ectx := s.ta.WithEvent(ctx, func() store.Event { return changeevents.NamespaceDropped(warehouse, levels, tableaccess.Who(ctx)) })
	err := s.store.NamespaceDelete(ectx, warehouse, levels)
	switch {
	case errors.Is(err, store.ErrNoSuchNamespace):
		return ident.NamespaceNotFound(err, levels)
	case errors.Is(err, store.ErrNotEmpty):
		return fault.Wrap(fault.NamespaceNotEmpty, err, "Namespace is not empty: %s", ident.NamespaceString(levels))
	}
	return storefault.Of(err, warehouse)
}
