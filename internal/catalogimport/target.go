package catalogimport

import (
	"context"
	"net/http"
	"net/url"

	"github.com/lakehold/catalog/internal/restclient"
	"strings"
)

// Target is the catalog objects are imported into. Each call is one
// request the target applies whole or refuses; a refusal is returned as
// the target's error, which the report shows by name.
type Target interface {
	// NamespaceProperties returns a namespace's properties and whether it
	// exists.
	NamespaceProperties(ctx context.Context, ns []string) (map[string]string, bool, error)
	// CreateNamespace creates a namespace with its properties.
	CreateNamespace(ctx context.Context, ns []string, props map[string]string) error
	// TableLocation returns the metadata location of a table and whether
	// it exists; likewise ViewLocation for a view.
	TableLocation(ctx context.Context, ns []string, name string) (string, bool, error)
	ViewLocation(ctx context.Context, ns []string, name string) (string, bool, error)
	// RegisterTable adopts a table's metadata file under ns.name;
	// likewise RegisterView.
	RegisterTable(ctx context.Context, ns []string, name, metadataLocation string) error
	RegisterView(ctx context.Context, ns []string, name, metadataLocation string) error
}

// RESTTarget is a Lakehold catalog reached over its Iceberg REST API:
// namespaces are created, tables and views registered (POST .../register
// and .../register-view), so the target checks every location as it
// does for any client.
type RESTTarget struct {
	c         *restclient.Client
	warehouse string // as given; "" for the target's default
}

// OpenTarget signs in to the Lakehold catalog e names and reads its
// config. It fails when it cannot be reached or refuses the sign-in.
func OpenTarget(ctx context.Context, e Endpoint) (*RESTTarget, error) {
	c, err := connect(ctx, e)
	if err != nil {
		return nil, err
	}
	return &RESTTarget{c: c, warehouse: e.Warehouse}, nil
}

// Prefixes returns where the target warehouse lets tables and views be:
// its location and its allowed-locations, canonical, from the management
// API (GET /management/v1/warehouses/{name}; the default warehouse is
// named by the config's prefix). It fails when that is refused, for
// example to a caller without the right to see the warehouse.
func (t *RESTTarget) Prefixes(ctx context.Context) ([]string, error) {
	name := t.warehouse
	if name == "" {
		name = t.c.Prefix
	}
	var w struct {
		Location   string            `json:"location"`
		Properties map[string]string `json:"properties"`
	}
	if err := t.c.Do(ctx, http.MethodGet, "/management/v1/warehouses/"+url.PathEscape(name), nil, nil, &w); err != nil {
		return nil, err
	}
	out := []string{canonical(w.Location)}
	for _, p := range strings.Split(w.Properties["allowed-locations"], ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, canonical(p))
		}
	}
	return out, nil
}

// NamespaceProperties implements Target.
func (t *RESTTarget) NamespaceProperties(ctx context.Context, ns []string) (map[string]string, bool, error) {
	var res struct {
		Properties map[string]string `json:"properties"`
	}
	err := t.c.Do(ctx, http.MethodGet, t.c.NamespaceURL(ns), nil, nil, &res)
	if isStatus(err, http.StatusNotFound) {
		return nil, false, nil
	}
	return res.Properties, err == nil, err
}

// CreateNamespace implements Target.
func (t *RESTTarget) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	if props == nil {
		props = map[string]string{}
	}
	body := map[string]any{"namespace": ns, "properties": props}
	return t.c.Do(ctx, http.MethodPost, t.c.Base()+"/namespaces", nil, body, nil)
}

// TableLocation implements Target.
func (t *RESTTarget) TableLocation(ctx context.Context, ns []string, name string) (string, bool, error) {
	return t.location(ctx, t.c.NamespaceURL(ns)+"/tables/"+url.PathEscape(name)+"?snapshots=refs")
}

// ViewLocation implements Target.
func (t *RESTTarget) ViewLocation(ctx context.Context, ns []string, name string) (string, bool, error) {
	return t.location(ctx, t.c.NamespaceURL(ns)+"/views/"+url.PathEscape(name))
}

// location loads an object for its metadata location: a 404 is "not
// there", any other refusal an error.
func (t *RESTTarget) location(ctx context.Context, path string) (string, bool, error) {
	var res struct {
		MetadataLocation string `json:"metadata-location"`
	}
	err := t.c.Do(ctx, http.MethodGet, path, nil, nil, &res)
	if isStatus(err, http.StatusNotFound) {
		return "", false, nil
	}
	return res.MetadataLocation, err == nil, err
}

// RegisterTable implements Target.
func (t *RESTTarget) RegisterTable(ctx context.Context, ns []string, name, metadataLocation string) error {
	body := map[string]string{"name": name, "metadata-location": metadataLocation}
	return t.c.Do(ctx, http.MethodPost, t.c.NamespaceURL(ns)+"/register", nil, body, nil)
}

// RegisterView implements Target.
func (t *RESTTarget) RegisterView(ctx context.Context, ns []string, name, metadataLocation string) error {
	body := map[string]string{"name": name, "metadata-location": metadataLocation}
	return t.c.Do(ctx, http.MethodPost, t.c.NamespaceURL(ns)+"/register-view", nil, body, nil)
}
