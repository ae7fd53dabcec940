package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
)

var _ catalogimport.Target = (*importTarget)(nil)

// importTarget is a warehouse of this catalog as the import's target,
// reached in process as the caller: every write is the service call a
// client's create or register makes, so it passes the same checks.
type importTarget struct {
	s         *Service
	warehouse string
}

// refused turns err into what the report may show: a fault of the same
// kind (so a run stopped by it can answer its status) with the message a
// client would be answered, without the cause (an internal error's is
// logged); nil stays nil.
func (t *importTarget) refused(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind == fault.Internal {
		t.s.log.ErrorContext(ctx, "import: target failed", slog.String("warehouse", t.warehouse), slog.String("object", what), slog.Any("error", err))
		return fault.New(fault.Internal, "internal error (logged by the server)")
	}
	return fault.New(fe.Kind, "%s", fe.Message)
}

// notFound reports whether err says the object (or its namespace) is not
// there.
func notFound(err error) bool {
	switch fault.KindOf(err) {
	case fault.NoSuchNamespace, fault.NoSuchTable, fault.NoSuchView:
		return true
	}
	return false
}

// NamespaceProperties implements catalogimport.Target.
func (t *importTarget) NamespaceProperties(ctx context.Context, ns []string) (map[string]string, bool, error) {
	got, err := t.s.LoadNamespace(ctx, t.warehouse, ns)
	if notFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, t.refused(ctx, ident.NamespaceString(ns), err)
	}
	return got.Properties, true, nil
}

// CreateNamespace implements catalogimport.Target.
func (t *importTarget) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	_, err := t.s.CreateNamespace(ctx, t.warehouse, ns, props)
	return t.refused(ctx, ident.NamespaceString(ns), err)
}

// TableLocation implements catalogimport.Target.
func (t *importTarget) TableLocation(ctx context.Context, ns []string, name string) (string, bool, error) {
	res, err := t.s.tables.LoadTable(ctx, t.warehouse, ident.Ident{Namespace: ns, Name: name}, "refs", 0)
	if notFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, t.refused(ctx, name, err)
	}
	return res.MetadataLocation, true, nil
}

// ViewLocation implements catalogimport.Target.
func (t *importTarget) ViewLocation(ctx context.Context, ns []string, name string) (string, bool, error) {
	res, err := t.s.views.Load(ctx, t.warehouse, ident.Ident{Namespace: ns, Name: name})
	if notFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, t.refused(ctx, name, err)
	}
	return res.MetadataLocation, true, nil
}

// RegisterTable implements catalogimport.Target.
func (t *importTarget) RegisterTable(ctx context.Context, ns []string, name, metadataLocation string) error {
	_, err := t.s.tables.RegisterTable(ctx, t.warehouse, ns, name, metadataLocation, false, 0)
	return t.refused(ctx, name, err)
}

// RegisterView implements catalogimport.Target.
func (t *importTarget) RegisterView(ctx context.Context, ns []string, name, metadataLocation string) error {
	_, err := t.s.views.Register(ctx, t.warehouse, ns, name, metadataLocation)
	return t.refused(ctx, name, err)
}

// Prefixes lets a dry run foresee location refusals: the warehouse's
// location and allowed-locations, canonical.
func (t *importTarget) Prefixes(ctx context.Context) ([]string, error) {
	w, err := t.s.whs.Get(ctx, t.warehouse)
	if err != nil {
		return nil, t.refused(ctx, t.warehouse, err)
	}
	out := []string{w.Location}
	if n, err := storagepath.Normalize(w.Location); err == nil {
		out[0] = n
	}
	for _, p := range locations.ExtraPrefixes(w) {
		out = append(out, p)
	}
	return out, nil
}
