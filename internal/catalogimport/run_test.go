package catalogimport

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeSource serves a fixed catalog: namespaces keep (with child
// keep.sub) and bad (with child bad.sub); one table in each, the one in
// keep.sub with two pages of listing.
func fakeSource(t *testing.T) *Source {
	t.Helper()
	tableMeta := func(loc string) json.RawMessage {
		return json.RawMessage(`{"format-version":2,"location":"` + loc + `"}`)
	}
	answers := map[string]any{
		"/v1/config":                         map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{"prefix": "p"}},
		"/v1/p/namespaces":                   map[string]any{"namespaces": [][]string{{"keep"}, {"bad"}}},
		"/v1/p/namespaces?parent=keep":       map[string]any{"namespaces": [][]string{{"keep", "sub"}}},
		"/v1/p/namespaces?parent=bad":        map[string]any{"namespaces": [][]string{{"bad", "sub"}}},
		"/v1/p/namespaces?parent=keep%1Fsub": map[string]any{"namespaces": [][]string{}},
		"/v1/p/namespaces?parent=bad%1Fsub":  map[string]any{"namespaces": [][]string{}},
		"/v1/p/namespaces/keep":              map[string]any{"properties": map[string]string{"owner": "a"}},
		"/v1/p/namespaces/bad":               map[string]any{"properties": map[string]string{}},
		"/v1/p/namespaces/keep%1Fsub":        map[string]any{"properties": map[string]string{}},
		"/v1/p/namespaces/bad%1Fsub":         map[string]any{"properties": map[string]string{}},
		"/v1/p/namespaces/keep/tables":       map[string]any{"identifiers": []map[string]any{{"namespace": []string{"keep"}, "name": "t"}}},
		"/v1/p/namespaces/keep%1Fsub/tables": map[string]any{"identifiers": []map[string]any{{"namespace": []string{"keep", "sub"}, "name": "u"}},
			"next-page-token": "2"},
		"/v1/p/namespaces/keep%1Fsub/tables?pageToken=2": map[string]any{"identifiers": []map[string]any{{"namespace": []string{"keep", "sub"}, "name": "w"}}},
		"/v1/p/namespaces/bad/tables":                    map[string]any{"identifiers": []map[string]any{{"namespace": []string{"bad"}, "name": "t"}}},
		"/v1/p/namespaces/bad%1Fsub/tables":              map[string]any{"identifiers": []map[string]any{}},
		"/v1/p/namespaces/keep/tables/t":                 map[string]any{"metadata-location": "s3://b/keep/t/metadata/1.metadata.json", "metadata": tableMeta("s3://b/keep/t")},
		"/v1/p/namespaces/keep%1Fsub/tables/u":           map[string]any{"metadata-location": "s3://b/u/metadata/1.metadata.json", "metadata": tableMeta("s3://b/u")},
		"/v1/p/namespaces/keep%1Fsub/tables/w":           map[string]any{"metadata-location": "s3://b/w/metadata/1.metadata.json", "metadata": tableMeta("s3://b/w")},
		"/v1/p/namespaces/bad/tables/t":                  map[string]any{"metadata-location": "s3://b/bad/t/metadata/1.metadata.json", "metadata": tableMeta("s3://b/bad/t")},
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.EscapedPath()
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		a, ok := answers[key]
		if strings.HasSuffix(key, "/views") {
			a, ok = map[string]any{"identifiers": []any{}}, true
		}
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"no ` + key + `","type":"NoSuchNamespaceException","code":404}}`))
			return
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(hs.Close)
	src, err := OpenSource(context.Background(), Endpoint{URI: hs.URL})
	require.NoError(t, err)
	return src
}

// fakeTarget records what it is asked to write and refuses namespace bad.
type fakeTarget struct {
	created    [][]string
	registered []string
}

func (f *fakeTarget) NamespaceProperties(context.Context, []string) (map[string]string, bool, error) {
	return nil, false, nil
}

func (f *fakeTarget) CreateNamespace(_ context.Context, ns []string, _ map[string]string) error {
	if ns[0] == "bad" {
		return errors.New("400 BadRequestException: no")
	}
	f.created = append(f.created, ns)
	return nil
}

func (f *fakeTarget) TableLocation(context.Context, []string, string) (string, bool, error) {
	return "", false, nil
}

func (f *fakeTarget) ViewLocation(context.Context, []string, string) (string, bool, error) {
	return "", false, nil
}

func (f *fakeTarget) RegisterTable(_ context.Context, ns []string, name, _ string) error {
	f.registered = append(f.registered, strings.Join(append(append([]string{}, ns...), name), "."))
	return nil
}

func (f *fakeTarget) RegisterView(context.Context, []string, string, string) error { return nil }

// TestRunRefusedNamespace: a namespace the target refuses takes its
// children and their objects with it, by name; the rest is imported,
// following a listing's pages.
func TestRunRefusedNamespace(t *testing.T) {
	dst := &fakeTarget{}
	var progress []string
	rep, err := Run(context.Background(), fakeSource(t), dst, Options{Progress: func(done, total int, it Item) {
		require.Equal(t, 8, total)
		progress = append(progress, it.FullName())
	}})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"keep"}, {"keep", "sub"}}, dst.created)
	require.Equal(t, []string{"keep.t", "keep.sub.u", "keep.sub.w"}, dst.registered)
	require.Len(t, progress, 8)
	refused := map[string]string{}
	for _, it := range rep.Refused() {
		refused[it.FullName()] = it.Reason
	}
	require.Equal(t, map[string]string{
		"bad":     "the target refused it: 400 BadRequestException: no",
		"bad.sub": "its parent namespace bad was refused",
		"bad.t":   "its namespace bad was refused",
	}, refused)
}

// TestRunFilter: --namespace keep.sub creates keep (its parent) without
// keep's own table.
func TestRunFilter(t *testing.T) {
	dst := &fakeTarget{}
	rep, err := Run(context.Background(), fakeSource(t), dst, Options{Namespaces: [][]string{{"keep", "sub"}}})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"keep"}, {"keep", "sub"}}, dst.created)
	require.Equal(t, []string{"keep.sub.u", "keep.sub.w"}, dst.registered)
	require.Empty(t, rep.Refused())
}

func TestCheckDialects(t *testing.T) {
	known := dialectSet(nil)
	view := func(reprs string) json.RawMessage {
		return json.RawMessage(`{"current-version-id":2,"versions":[{"version-id":1,"representations":[{"type":"sql","dialect":"cobol"}]},` +
			`{"version-id":2,"representations":` + reprs + `}]}`)
	}
	require.Empty(t, checkDialects(view(`[{"type":"sql","dialect":"Spark"},{"type":"sql","dialect":"trino"}]`), known),
		"an old version's dialect does not matter; names are case-insensitive")
	require.Contains(t, checkDialects(view(`[{"type":"sql","dialect":"spark"},{"type":"sql","dialect":"cobol"}]`), known), `"cobol"`)
	require.Contains(t, checkDialects(view(`[{"type":"sql"}]`), known), `unknown SQL dialect ""`)
	require.Contains(t, checkDialects(view(`[{"type":"substrait"}]`), known), "not sql")
	require.Empty(t, checkDialects(view(`[{"type":"sql","dialect":"cobol"}]`), dialectSet([]string{"cobol"})))
	require.Contains(t, checkDialects(json.RawMessage(`{"current-version-id":3,"versions":[]}`), known), "no current version")
}

func TestOverlaps(t *testing.T) {
	p := func(name, loc string) *pending {
		return &pending{item: Item{Kind: KindTable, Namespace: []string{"n"}, Name: name}, location: canonical(loc)}
	}
	objs := []*pending{p("a", "file:/w/a"), p("b", "file:///w/a/b"), p("c", "file:///w/c"), p("d", "file:///w/ab"), p("e", "file:///w/a")}
	got := overlaps(objs)
	require.Len(t, got, 3, "a, b and e overlap; d only shares a name prefix with a")
	require.Contains(t, got[0], "n.b")
	require.Contains(t, got[0], "n.e")
	require.Contains(t, got[1], "n.a")
	require.NotContains(t, got, 2)
	require.NotContains(t, got, 3)
}

func TestPropertyDiff(t *testing.T) {
	require.Empty(t, propertyDiff(map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}))
	require.Equal(t, "a, c", propertyDiff(map[string]string{"a": "1", "c": "3"}, map[string]string{"a": "2"}))
}

// TestViewsWithoutRoutes: a catalog that lists no endpoints and answers
// 404 to a view listing has no views; one that lists the route and then
// answers 404 is an error.
func TestViewsWithoutRoutes(t *testing.T) {
	for _, listsRoute := range []bool{false, true} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/config" {
				cfg := map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}}
				if listsRoute {
					cfg["endpoints"] = []string{"GET /v1/{prefix}/namespaces/{namespace}/views"}
				}
				_ = json.NewEncoder(w).Encode(cfg)
				return
			}
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"no route","type":"NotFound","code":404}}`))
		}))
		src, err := OpenSource(context.Background(), Endpoint{URI: hs.URL})
		require.NoError(t, err)
		names, err := src.Views(context.Background(), []string{"ns"}, -1)
		if listsRoute {
			require.Error(t, err)
		} else {
			require.NoError(t, err)
			require.Empty(t, names)
		}
		hs.Close()
	}
}

// prefixTarget is a fakeTarget whose warehouse keeps objects under s3://b/keep.
type prefixTarget struct{ fakeTarget }

func (prefixTarget) Prefixes(context.Context) ([]string, error) { return []string{"s3://b/keep"}, nil }

// TestDryRunLocations: a dry run refuses the objects outside the
// warehouse's prefixes when the target shows them, and says when it could
// not check; it writes nothing either way.
func TestDryRunLocations(t *testing.T) {
	dst := &prefixTarget{}
	rep, err := Run(context.Background(), fakeSource(t), dst, Options{DryRun: true, Namespaces: [][]string{{"keep"}}})
	require.NoError(t, err)
	require.Contains(t, rep.Note, "checked")
	require.Equal(t, WouldImport, rep.Items[2].Status, rep.Items[2].FullName())
	var refused []string
	for _, it := range rep.Refused() {
		refused = append(refused, it.FullName())
		require.Contains(t, it.Reason, "outside the target warehouse")
	}
	require.Equal(t, []string{"keep.sub.u", "keep.sub.w"}, refused)
	require.Empty(t, dst.created)
	require.Empty(t, dst.registered)

	plain := &fakeTarget{}
	rep, err = Run(context.Background(), fakeSource(t), plain, Options{DryRun: true, Namespaces: [][]string{{"keep"}}})
	require.NoError(t, err)
	require.Contains(t, rep.Note, "not checked")
	require.Empty(t, rep.Refused())
	require.Empty(t, plain.created)
}

// TestRunLimit: a run that would handle more objects than MaxObjects (4
// namespaces and 4 tables here) stops before writing anything; at the
// limit it runs.
func TestRunLimit(t *testing.T) {
	for _, max := range []int{3, 7} {
		dst := &fakeTarget{}
		_, err := Run(context.Background(), fakeSource(t), dst, Options{MaxObjects: max})
		var le *LimitError
		require.ErrorAs(t, err, &le, "max %d", max)
		require.Equal(t, max, le.Max)
		require.Empty(t, dst.created)
		require.Empty(t, dst.registered)
	}
	dst := &fakeTarget{}
	_, err := Run(context.Background(), fakeSource(t), dst, Options{MaxObjects: 8})
	require.NoError(t, err)
	require.Len(t, dst.registered, 3)
}
