package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/validation"
)

// notV4 is the header pair of a client that has not said it reads v4
// (the tests' default sends X-Iceberg-Column-Files: true).
var notV4 = []string{service.ColumnFilesHeader, ""}

// requireV4Refusal checks the one documented refusal of a v4 answer.
func requireV4Refusal(t *testing.T, r response) {
	t.Helper()
	require.Equal(t, 400, r.status, "%s", r.body)
	typ, msg := r.errorOf(t)
	require.Equal(t, "BadRequestException", typ)
	require.Contains(t, msg, "pip install ./clients/python")
	require.Contains(t, msg, "X-Iceberg-Column-Files: true")
	require.Equal(t, validation.ReasonV4UnsupportedByClient, r.json(t)["error"].(map[string]any)["reason"])
}

// TestV4GuardRefusesUnawareClients: a client without the header never gets
// v4 metadata nor a half-created v4 table; exists, rename, drop and
// credentials keep working; v1–v3 tables are untouched by the guard.
func TestV4GuardRefusesUnawareClients(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			v4 := map[string]any{"properties": map[string]string{"format-version": "4"}}
			for _, stage := range []bool{false, true, false} {
				body := map[string]any{"name": "w", "schema": json.RawMessage(testSchema), "stage-create": stage, "properties": v4["properties"]}
				requireV4Refusal(t, b.do(t, "POST", "/v1/wh/namespaces/ns/tables", body, notV4...))
				require.Equal(t, 404, b.do(t, "HEAD", "/v1/wh/namespaces/ns/tables/w", nil, notV4...).status, "nothing created")
			}

			require.Equal(t, 200, b.createTable(t, "ns", "w", v4).status)
			path := "/v1/wh/namespaces/ns/tables/w"
			requireV4Refusal(t, b.do(t, "GET", path, nil, notV4...))
			requireV4Refusal(t, b.do(t, "GET", path+"?snapshots=refs", nil, notV4...))
			set := map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}}}}
			requireV4Refusal(t, b.do(t, "POST", path, set, notV4...))
			tx := map[string]any{"table-changes": []any{map[string]any{"identifier": map[string]any{"namespace": []string{"ns"}, "name": "w"},
				"requirements": []any{}, "updates": set["updates"]}}}
			requireV4Refusal(t, b.do(t, "POST", "/v1/wh/transactions/commit", tx, notV4...))
			require.NotContains(t, tableProps(t, b, "ns", "w"), "k", "nothing committed")
			require.Equal(t, 204, b.do(t, "HEAD", path, nil, notV4...).status)
			require.Equal(t, 200, b.do(t, "GET", path+"/credentials", nil, notV4...).status)
			require.Equal(t, 200, b.do(t, "GET", path, nil).status, "with the header the table loads")

			// Register of a v4 metadata file: refused, nothing registered.
			loc := b.do(t, "GET", path, nil).json(t)["metadata-location"].(string)
			require.Equal(t, 204, b.do(t, "DELETE", path, nil, notV4...).status)
			reg := map[string]any{"name": "w", "metadata-location": loc}
			requireV4Refusal(t, b.do(t, "POST", "/v1/wh/namespaces/ns/register", reg, notV4...))
			require.Equal(t, 404, b.do(t, "HEAD", path, nil, notV4...).status)

			// v2: create, load, commit as before without the header; the
			// upgrade to 4 is refused and changes nothing.
			v2 := "/v1/wh/namespaces/ns/tables/v2"
			body := map[string]any{"name": "v2", "schema": json.RawMessage(testSchema)}
			require.Equal(t, 200, b.do(t, "POST", "/v1/wh/namespaces/ns/tables", body, notV4...).status)
			require.Equal(t, 200, b.do(t, "POST", v2, set, notV4...).status)
			r := b.do(t, "GET", v2, nil, notV4...)
			require.Equal(t, 200, r.status)
			require.Equal(t, 2, formatVersion(t, r))
			require.Empty(t, r.header.Get("Warning"))
			up := map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "upgrade-format-version", "format-version": 4}}}
			requireV4Refusal(t, b.do(t, "POST", v2, up, notV4...))
			require.Equal(t, 2, formatVersion(t, b.do(t, "GET", v2, nil, notV4...)))

			// With the header the upgrade lands and says what it costs.
			r = b.do(t, "POST", v2, up)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 4, formatVersion(t, r))
			w := r.header.Get("Warning")
			require.True(t, strings.HasPrefix(w, `299 - "`) && strings.HasSuffix(w, `"`), w)
			require.Contains(t, w, "no downgrade")
			require.Equal(t, 2, strings.Count(w, `"`), "one quoted warn-text")
			requireV4Refusal(t, b.do(t, "GET", v2, nil, notV4...))
		})
	}
}
