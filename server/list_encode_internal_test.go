package server

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/openapi"
)

// TestIdentifierListMatchesEncoder holds identifierList to the bytes the
// generated response's encoding/json path writes, for plain names and for
// names that need escaping (quotes, control characters, HTML, non-ASCII).
func TestIdentifierListMatchesEncoder(t *testing.T) {
	cases := []struct {
		levels, names []string
		next          string
	}{
		{[]string{"ns"}, []string{}, ""},
		{[]string{"ns"}, []string{"t0", "t1", "a_b-c.d"}, "dDE="},
		{[]string{"a", "b<c>"}, []string{`q"uote`, `back\slash`, "tab\tnl\n", "<html>&", "ünï", "\u2028", "\xff", "del\x7f"}, `to"k`},
	}
	for _, c := range cases {
		ids := make([]openapi.TableIdentifier, 0, len(c.names))
		for _, n := range c.names {
			ids = append(ids, openapi.TableIdentifier{Namespace: c.levels, Name: n})
		}
		var want bytes.Buffer
		require.NoError(t, json.NewEncoder(&want).Encode(openapi.ListTables200JSONResponse{Identifiers: ids, NextPageToken: nextToken(c.next)}))
		rec := httptest.NewRecorder()
		require.NoError(t, identifierList{levels: c.levels, names: c.names, next: c.next}.VisitListTablesResponse(rec))
		require.Equal(t, want.String(), rec.Body.String())
		require.Equal(t, 200, rec.Code)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}
}

// BenchmarkIdentifierList compares writing a 100-table page by
// identifierList with the generated response's encoding/json path.
func BenchmarkIdentifierList(b *testing.B) {
	levels := []string{"ns"}
	names := make([]string, 100)
	ids := make([]openapi.TableIdentifier, 100)
	for i := range names {
		names[i] = "t" + strconv.Itoa(i)
		ids[i] = openapi.TableIdentifier{Namespace: levels, Name: names[i]}
	}
	b.Run("identifierList", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = identifierList{levels: levels, names: names}.VisitListTablesResponse(httptest.NewRecorder())
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = openapi.ListTables200JSONResponse{Identifiers: ids}.VisitListTablesResponse(httptest.NewRecorder())
		}
	})
}
