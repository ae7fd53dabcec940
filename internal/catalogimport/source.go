package catalogimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Bounds on reading a source, so that a catalog that nests namespaces or
// pages a listing without end stops the run instead of holding it (and
// its memory) for good.
const (
	// MaxNamespaceDepth is the deepest namespace read: a source with a
	// deeper one stops the run.
	MaxNamespaceDepth = 16
	// MaxPages is the most pages one listing is followed for: a listing
	// still handing out a next-page-token after them stops the run.
	MaxPages = 1000
)

// errTooMany says a listing went past the items it was allowed; the run
// turns it into a *LimitError.
var errTooMany = errors.New("more items than the run may handle")

// Namespaces lists the namespaces keep accepts (nil: all), each before its
// children; it does not descend into one keep refuses. It fails on the
// first listing refused, on a namespace deeper than MaxNamespaceDepth, and
// with errTooMany as soon as more than max are listed (max < 0: no bound).
func (s *Source) Namespaces(ctx context.Context, keep func([]string) bool, max int) ([][]string, error) {
	var out [][]string
	err := s.namespacesUnder(ctx, nil, keep, max, &out)
	return out, err
}

func (s *Source) namespacesUnder(ctx context.Context, parent []string, keep func([]string) bool, max int, out *[][]string) error {
	q := url.Values{}
	if len(parent) > 0 {
		q.Set("parent", s.c.NamespaceParam(parent))
	}
	return pages(ctx, s.c, s.c.Base()+"/namespaces", q, func(raw json.RawMessage) error {
		var page struct {
			Namespaces [][]string `json:"namespaces"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		for _, ns := range page.Namespaces {
			// Some catalogs list the parent itself or deeper levels; keep
			// only direct children so the walk ends.
			if len(ns) != len(parent)+1 || !hasPrefix(ns, parent) || (keep != nil && !keep(ns)) {
				continue
			}
			if len(ns) > MaxNamespaceDepth {
				return fmt.Errorf("the source's namespaces nest deeper than %d levels", MaxNamespaceDepth)
			}
			*out = append(*out, ns)
			if max >= 0 && len(*out) > max {
				return errTooMany
			}
			if err := s.namespacesUnder(ctx, ns, keep, max, out); err != nil {
				return err
			}
		}
		return nil
	})
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

// Tables lists a namespace's table names, following every page; past max
// names (max < 0: no bound) it stops with errTooMany.
func (s *Source) Tables(ctx context.Context, ns []string, max int) ([]string, error) {
	return identifiers(ctx, s.c, s.c.NamespaceURL(ns)+"/tables", max)
}

// Views lists a namespace's view names; none when the catalog does not
// list views among its endpoints or, listing no endpoints at all, answers
// the listing of a namespace it just listed with 404, 405 or 501 (it has
// no view routes). Past max names it stops as Tables does.
func (s *Source) Views(ctx context.Context, ns []string, max int) ([]string, error) {
	const route = "GET /v1/{prefix}/namespaces/{namespace}/views"
	if !s.c.Supports(route) {
		return nil, nil
	}
	names, err := identifiers(ctx, s.c, s.c.NamespaceURL(ns)+"/views", max)
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

// identifiers lists the names of a ListTablesResponse-shaped listing, at
// most max of them (max < 0: no bound; past it, errTooMany).
func identifiers(ctx context.Context, c *restclient.Client, path string, max int) ([]string, error) {
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
			if max >= 0 && len(out) > max {
				return errTooMany
			}
		}
		return nil
	})
	return out, err
}

// pages follows next-page-token until the catalog gives none, handing
// each page's body to each; it fails when each does, and when the
// catalog still gives a token after MaxPages pages.
func pages(ctx context.Context, c *restclient.Client, path string, q url.Values, each func(json.RawMessage) error) error {
	for n := 1; ; n++ {
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
		if n >= MaxPages {
			return fmt.Errorf("the listing went on past %d pages", MaxPages)
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
