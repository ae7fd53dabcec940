package catalogimport

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// endlessSource is a fake of a misbehaving catalog, served in process:
// with deep set, every namespace has one child, without end; otherwise it
// has one namespace, a, whose table listing (or, with wideNamespaces, the
// top-level namespace listing) hands out a next-page-token on every page,
// without end. It counts the listing requests it answers.
type endlessSource struct {
	deep, wideNamespaces bool
	nsListings, pages    atomic.Int32
}

func (f *endlessSource) open(t *testing.T) *Source {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("pageToken")
		next, _ := strconv.Atoi(tok)
		next++
		var a any
		switch p := r.URL.Path; {
		case p == "/v1/config":
			a = map[string]any{}
		case p == "/v1/namespaces":
			f.nsListings.Add(1)
			parent := r.URL.Query().Get("parent")
			switch {
			case f.deep && parent == "":
				a = map[string]any{"namespaces": [][]string{{"n"}}}
			case f.deep:
				levels := strings.Split(parent, "\x1f")
				a = map[string]any{"namespaces": [][]string{append(levels, "n")}}
			case f.wideNamespaces && parent == "":
				f.pages.Add(1)
				a = map[string]any{"namespaces": [][]string{{"n" + tok}}, "next-page-token": strconv.Itoa(next)}
			case parent == "":
				a = map[string]any{"namespaces": [][]string{{"a"}}}
			default:
				a = map[string]any{"namespaces": [][]string{}}
			}
		case strings.HasSuffix(p, "/tables"):
			f.pages.Add(1)
			a = map[string]any{"identifiers": []map[string]any{{"namespace": []string{"a"}, "name": "t" + tok}}, "next-page-token": strconv.Itoa(next)}
		case strings.HasSuffix(p, "/views"):
			a = map[string]any{"identifiers": []any{}}
		default:
			a = map[string]any{"properties": map[string]string{}, "metadata-location": "s3://b/" + p + "/m.json",
				"metadata": map[string]any{"format-version": 2, "location": "s3://b/" + p}}
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(hs.Close)
	src, err := OpenSource(context.Background(), Endpoint{URI: hs.URL})
	require.NoError(t, err)
	return src
}

// TestListingStopsAtLimit: a listing that never ends stops as soon as the
// run is over MaxObjects, with a *LimitError and nothing written, having
// asked for no more pages than the limit allows.
func TestListingStopsAtLimit(t *testing.T) {
	for _, wide := range []bool{false, true} {
		f := &endlessSource{wideNamespaces: wide}
		dst := &fakeTarget{}
		_, err := Run(context.Background(), f.open(t), dst, Options{MaxObjects: 5})
		var le *LimitError
		require.ErrorAs(t, err, &le, "wide namespaces %v", wide)
		require.Equal(t, 5, le.Max)
		// One item a page: the listing stops at the first item over the
		// limit, the 6th namespace, or the 5th table after namespace a.
		want := int32(5)
		if wide {
			want = 6
		}
		require.Equal(t, want, f.pages.Load(), "wide namespaces %v", wide)
		require.Empty(t, dst.created)
		require.Empty(t, dst.registered)
	}
}

// TestNamespaceDepthCap: a source whose namespaces nest without end stops
// the run once one is deeper than MaxNamespaceDepth, nothing written.
func TestNamespaceDepthCap(t *testing.T) {
	f := &endlessSource{deep: true}
	dst := &fakeTarget{}
	_, err := Run(context.Background(), f.open(t), dst, Options{})
	require.EqualError(t, err, "source: list namespaces: the source's namespaces nest deeper than 16 levels")
	require.Equal(t, int32(MaxNamespaceDepth+1), f.nsListings.Load(), "the top and each of the 16 levels listed once")
	require.Empty(t, dst.created)
}

// TestPageCap: without an object limit, a listing that hands out a
// next-page-token forever is followed for MaxPages pages, then stops the
// run.
func TestPageCap(t *testing.T) {
	f := &endlessSource{}
	dst := &fakeTarget{}
	_, err := Run(context.Background(), f.open(t), dst, Options{})
	require.EqualError(t, err, "source: list tables of a: the listing went on past 1000 pages")
	require.Equal(t, int32(MaxPages), f.pages.Load())
	require.Empty(t, dst.created)
}
