package catalogimport

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/lakehold/catalog/internal/restclient"
)

// Source reads another Iceberg REST catalog: its namespaces (all levels),
// their properties, and the metadata location and metadata of each table
// and view. It only reads.
type Source struct{ c *restclient.Client }

// Object is a table or view as the source serves it.
type Object struct {
	Namespace        []string
	Name             string
	MetadataLocation string
	Metadata         json.RawMessage
}

// OpenSource signs in to the catalog e names and reads its config. It
// fails when the catalog cannot be reached or refuses the sign-in.
func OpenSource(ctx context.Context, e Endpoint) (*Source, error) {
	c, err := connect(ctx, e)
	if err != nil {
		return nil, err
	}
	return &Source{c: c}, nil
}

// Namespaces lists every namespace under parent (nil: from the top), each
// before its children. It fails on the first listing refused.
func (s *Source) Namespaces(ctx context.Context, parent []string) ([][]string, error) {
	q := url.Values{}
	if len(parent) > 0 {
		q.Set("parent", s.c.NamespaceParam(parent))
	}
	var out [][]string
	err := pages(ctx, s.c, s.c.Base()+"/namespaces", q, func(raw json.RawMessage) error {
		var page struct {
			Namespaces [][]string `json:"namespaces"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		for _, ns := range page.Namespaces {
			// Some catalogs list the parent itself or deeper levels; keep
			// only direct children so the walk ends.
			if len(ns) != len(parent)+1 || !hasPrefix(ns, parent) {
				continue
			}
			out = append(out, ns)
			sub, err := s.Namespaces(ctx, ns)
			if err != nil {
				return err
			}
			out = append(out, sub...)
		}
		return nil
	})
	return out, err
}

// NamespaceProperties loads a namespace's properties. It fails when the
// source refuses or cannot be reached, as do the listings and loads below.
func (s *Source) NamespaceProperties(ctx context.Context, ns []string) (map[string]string, error) {
	var res struct {
		Properties map[string]string `json:"properties"`
	}
	err := s.c.Do(ctx, http.MethodGet, s.c.NamespaceURL(ns), nil, nil, &res)
	return res.Properties, err
}

// Tables lists a namespace's table names, following every page.
func (s *Source) Tables(ctx context.Context, ns []string) ([]string, error) {
	return identifiers(ctx, s.c, s.c.NamespaceURL(ns)+"/tables")
}

// Views lists a namespace's view names; none when the catalog does not
// list views among its endpoints or, listing no endpoints at all, answers
// the listing of a namespace it just listed with 404, 405 or 501 (it has
// no view routes).
func (s *Source) Views(ctx context.Context, ns []string) ([]string, error) {
	const route = "GET /v1/{prefix}/namespaces/{namespace}/views"
	if !s.c.Supports(route) {
		return nil, nil
	}
	names, err := identifiers(ctx, s.c, s.c.NamespaceURL(ns)+"/views")
	if err != nil && !s.c.Endpoints[route] &&
		(isStatus(err, http.StatusNotFound) || isStatus(err, http.StatusMethodNotAllowed) || isStatus(err, http.StatusNotImplemented)) {
		return nil, nil
	}
	return names, err
}

// LoadTable loads a table's metadata location and metadata.
func (s *Source) LoadTable(ctx context.Context, ns []string, name string) (*Object, error) {
	return load(ctx, s.c, s.c.NamespaceURL(ns)+"/tables/"+url.PathEscape(name), ns, name)
}

// LoadView loads a view's metadata location and metadata.
func (s *Source) LoadView(ctx context.Context, ns []string, name string) (*Object, error) {
	return load(ctx, s.c, s.c.NamespaceURL(ns)+"/views/"+url.PathEscape(name), ns, name)
}

func load(ctx context.Context, c *restclient.Client, path string, ns []string, name string) (*Object, error) {
	var res struct {
		MetadataLocation string          `json:"metadata-location"`
		Metadata         json.RawMessage `json:"metadata"`
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, nil, &res); err != nil {
		return nil, err
	}
	return &Object{Namespace: ns, Name: name, MetadataLocation: res.MetadataLocation, Metadata: res.Metadata}, nil
}

// identifiers lists the names of a ListTablesResponse-shaped listing.
func identifiers(ctx context.Context, c *restclient.Client, path string) ([]string, error) {
	var out []string
	err := pages(ctx, c, path, url.Values{}, func(raw json.RawMessage) error {
		var page struct {
			Identifiers []struct {
				Name string `json:"name"`
			} `json:"identifiers"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		for _, id := range page.Identifiers {
			out = append(out, id.Name)
		}
		return nil
	})
	return out, err
}

// pages follows next-page-token until the catalog gives none, handing
// each page's body to each.
func pages(ctx context.Context, c *restclient.Client, path string, q url.Values, each func(json.RawMessage) error) error {
	for {
		var raw json.RawMessage
		if err := c.Do(ctx, http.MethodGet, path, q, nil, &raw); err != nil {
			return err
		}
		if err := each(raw); err != nil {
			return err
		}
		var tok struct {
			Next *string `json:"next-page-token"`
		}
		if err := json.Unmarshal(raw, &tok); err != nil || tok.Next == nil || *tok.Next == "" {
			return nil
		}
		q.Set("pageToken", *tok.Next)
	}
}

func hasPrefix(ns, parent []string) bool {
	for i, l := range parent {
		if ns[i] != l {
			return false
		}
	}
	return true
}
