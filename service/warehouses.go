package service

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/lakehold/catalog/store"
)

// warehouseName keeps names URL-safe: they are used raw as the REST prefix.
var warehouseName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// reservedPrefixes are path words clients could confuse with a prefix.
var reservedPrefixes = map[string]bool{
	"namespaces": true, "tables": true, "views": true, "transactions": true, "config": true, "oauth": true,
}

// NormalizeLocation validates a storage location and returns it without a
// trailing slash. Accepted: file:///abs/path (also file:/abs/path),
// s3://bucket/..., gs://bucket/... with a lowercase scheme and the bucket in
// the authority.
func NormalizeLocation(loc string) (string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", newErr(KindBadRequest, "Invalid location %q: %v", loc, err)
	}
	if !strings.HasPrefix(loc, u.Scheme+":") {
		return "", newErr(KindBadRequest, "Invalid location %q: the scheme must be lowercase", loc)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", newErr(KindBadRequest, "Invalid location %q: file locations must not name a host", loc)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return "", newErr(KindBadRequest, "Invalid location %q: file locations need an absolute path", loc)
		}
	case "s3", "gs":
		if u.Host == "" {
			return "", newErr(KindBadRequest, "Invalid location %q: the bucket must be the authority (%s://bucket/path)", loc, u.Scheme)
		}
	default:
		return "", newErr(KindBadRequest, "Invalid location %q: scheme must be file, s3 or gs (lowercase)", loc)
	}
	return strings.TrimRight(loc, "/"), nil
}

// CreateWarehouse registers a warehouse: 400 for a bad name or location,
// 409 when the name is taken.
func (s *Service) CreateWarehouse(ctx context.Context, name, location string, props map[string]string) (*store.Warehouse, error) {
	if !warehouseName.MatchString(name) || reservedPrefixes[name] {
		return nil, newErr(KindBadRequest, "Invalid warehouse name %q: use letters, digits, '_', '.', '-' (max 63), not a reserved word", name)
	}
	loc, err := NormalizeLocation(location)
	if err != nil {
		return nil, err
	}
	if props == nil {
		props = map[string]string{}
	}
	w := &store.Warehouse{Name: name, Location: loc, Properties: props}
	err = s.store.WarehouseCreate(ctx, w)
	if errors.Is(err, store.ErrAlreadyExists) {
		return nil, wrapErr(KindAlreadyExists, err, "Warehouse already exists: %s", name)
	}
	return w, storeErr(err, name)
}

// GetWarehouse returns a warehouse or 404 NoSuchWarehouseException.
func (s *Service) GetWarehouse(ctx context.Context, name string) (*store.Warehouse, error) {
	w, err := s.store.WarehouseGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wrapErr(KindNoSuchWarehouse, err, "Warehouse does not exist: %s", name)
	}
	return w, storeErr(err, name)
}

// ListWarehouses returns every warehouse.
func (s *Service) ListWarehouses(ctx context.Context) ([]*store.Warehouse, error) {
	ws, err := s.store.WarehouseList(ctx)
	return ws, storeErr(err, "")
}

// DeleteWarehouse removes a warehouse with no namespaces: 404 when missing,
// 409 when not empty.
func (s *Service) DeleteWarehouse(ctx context.Context, name string) error {
	err := s.store.WarehouseDelete(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotEmpty):
		return wrapErr(KindNamespaceNotEmpty, err, "Warehouse is not empty: %s", name)
	case errors.Is(err, store.ErrNotFound):
		return wrapErr(KindNoSuchWarehouse, err, "Warehouse does not exist: %s", name)
	}
	return storeErr(err, name)
}

// EnsureWarehouse creates the warehouse when missing and returns it; an
// existing warehouse with another location is an error.
func (s *Service) EnsureWarehouse(ctx context.Context, name, location string) (*store.Warehouse, error) {
	w, err := s.store.WarehouseGet(ctx, name)
	if err == nil {
		loc, nerr := NormalizeLocation(location)
		if nerr != nil {
			return nil, nerr
		}
		if w.Location != loc {
			return nil, newErr(KindAlreadyExists, "Warehouse %s exists with location %s, not %s", name, w.Location, loc)
		}
		return w, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, storeErr(err, name)
	}
	w, err = s.CreateWarehouse(ctx, name, location, nil)
	if KindOf(err) == KindAlreadyExists { // lost a race with another replica
		return s.GetWarehouse(ctx, name)
	}
	return w, err
}
