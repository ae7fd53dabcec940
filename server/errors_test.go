package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestErrorPaths checks status, Iceberg type and message of each failure,
// and that every body is a complete ErrorModel.
func TestErrorPaths(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
			v := b.do(t, "POST", "/v1/wh/namespaces/ns/views", map[string]any{
				"name": "v", "schema": rawJSON(testSchema), "properties": map[string]string{},
				"view-version": rawJSON(`{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["ns"],
					"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`),
			})
			require.Equal(t, 200, v.status, "%s", v.body)

			cases := []struct {
				name, method, path string
				body               any
				status             int
				typ, msg           string
			}{
				{"config unknown warehouse", "GET", "/v1/config?warehouse=nope", nil, 404, "NoSuchWarehouseException", "Warehouse does not exist: nope"},
				{"namespace exists", "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}, 409, "AlreadyExistsException", "Namespace already exists: ns"},
				{"load missing namespace", "GET", "/v1/wh/namespaces/nope", nil, 404, "NoSuchNamespaceException", "Namespace does not exist: nope"},
				{"list children of missing", "GET", "/v1/wh/namespaces?parent=non-existing", nil, 404, "NoSuchNamespaceException", "Namespace does not exist: non-existing"},
				{"drop non-empty", "DELETE", "/v1/wh/namespaces/ns", nil, 409, "NamespaceNotEmptyException", "Namespace is not empty: ns"},
				{"props missing ns", "POST", "/v1/wh/namespaces/nope/properties", map[string]any{"updates": map[string]string{"a": "b"}}, 404, "NoSuchNamespaceException", "Namespace does not exist: nope"},
				{"props key in both", "POST", "/v1/wh/namespaces/ns/properties", map[string]any{"updates": map[string]string{"a": "b"}, "removals": []string{"a"}}, 422, "UnprocessableEntityException", "Duplicate key to update and remove: a"},
				{"load missing table", "GET", "/v1/wh/namespaces/ns/tables/nope", nil, 404, "NoSuchTableException", "Table does not exist: ns.nope"},
				{"load table missing ns", "GET", "/v1/wh/namespaces/nope/tables/t", nil, 404, "NoSuchTableException", "Table does not exist: nope.t"},
				{"metadata table fallback", "GET", "/v1/wh/namespaces/ns%1Ft/tables/files", nil, 404, "NoSuchTableException", "Table does not exist: ns.t.files"},
				{"create in missing ns", "POST", "/v1/wh/namespaces/nope/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)}, 404, "NoSuchNamespaceException", "Namespace does not exist: nope"},
				{"create existing table", "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)}, 409, "AlreadyExistsException", "Table already exists: ns.t"},
				{"create table on view name", "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "v", "schema": rawJSON(testSchema)}, 409, "AlreadyExistsException", "View with same name already exists: ns.v"},
				{"create table bad schema", "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "x", "schema": rawJSON(`{"type":"struct","fields":[{"id":1,"name":"a","type":"nonsense","required":true}]}`)}, 400, "BadRequestException", ""},
				{"create table format 9", "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "x", "schema": rawJSON(testSchema), "properties": map[string]string{"format-version": "9"}}, 400, "BadRequestException", "Unsupported format version: 9 (supported: 1 to 4)"},
				{"create table bad location", "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "x", "schema": rawJSON(testSchema), "location": "S3://Bucket/x"}, 400, "BadRequestException", ""},
				{"malformed JSON", "POST", "/v1/wh/namespaces", "{not json", 400, "BadRequestException", ""},
				{"drop missing table", "DELETE", "/v1/wh/namespaces/ns/tables/nope", nil, 404, "NoSuchTableException", "Table does not exist: ns.nope"},
				{"bad purge flag", "DELETE", "/v1/wh/namespaces/ns/tables/t?purgeRequested=maybe", nil, 400, "BadRequestException", "purgeRequested must be true or false"},
				{"commit missing table", "POST", "/v1/wh/namespaces/ns/tables/nope", map[string]any{"requirements": []any{}, "updates": []any{}}, 404, "NoSuchTableException", "Table does not exist: ns.nope"},
				{"commit unknown action", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "frobnicate"}}}, 400, "BadRequestException", ""},
				{"commit unknown requirement", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{map[string]any{"type": "assert-moon-phase"}}, "updates": []any{}}, 400, "BadRequestException", "Unknown requirement type: assert-moon-phase"},
				{"requirement failed", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{map[string]any{"type": "assert-current-schema-id", "current-schema-id": 7}}, "updates": []any{}}, 409, "CommitFailedException", "Requirement failed: current schema changed: expected id 7 != 0"},
				{"assert-create on existing", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{map[string]any{"type": "assert-create"}}, "updates": []any{}}, 409, "CommitFailedException", "Requirement failed: table already exists"},
				{"uuid mismatch", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}}, "updates": []any{}}, 409, "CommitFailedException", ""},
				{"ref missing", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{map[string]any{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 42}}, "updates": []any{}}, 409, "CommitFailedException", "Requirement failed: branch or tag main is missing, expected 42"},
				{"rename onto view", "POST", "/v1/wh/tables/rename", map[string]any{"source": map[string]any{"namespace": []string{"ns"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"ns"}, "name": "v"}}, 409, "AlreadyExistsException", "Cannot rename ns.t to ns.v. View already exists"},
				{"rename missing source", "POST", "/v1/wh/tables/rename", map[string]any{"source": map[string]any{"namespace": []string{"ns"}, "name": "nope"}, "destination": map[string]any{"namespace": []string{"ns"}, "name": "x"}}, 404, "NoSuchTableException", "Table does not exist: ns.nope"},
				{"rename to missing ns", "POST", "/v1/wh/tables/rename", map[string]any{"source": map[string]any{"namespace": []string{"ns"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"nope"}, "name": "x"}}, 404, "NoSuchNamespaceException", "Namespace does not exist: nope"},
				{"load missing view", "GET", "/v1/wh/namespaces/ns/views/nope", nil, 404, "NoSuchViewException", "View does not exist: ns.nope"},
				{"create view on table name", "POST", "/v1/wh/namespaces/ns/views", map[string]any{"name": "t", "schema": rawJSON(testSchema), "properties": map[string]string{}, "view-version": rawJSON(`{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["ns"],"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`)}, 409, "AlreadyExistsException", "Table with same name already exists: ns.t"},
				{"rename view onto table", "POST", "/v1/wh/views/rename", map[string]any{"source": map[string]any{"namespace": []string{"ns"}, "name": "v"}, "destination": map[string]any{"namespace": []string{"ns"}, "name": "t"}}, 409, "AlreadyExistsException", "Cannot rename ns.v to ns.t. Table already exists"},
				{"transaction without identifier", "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{map[string]any{"requirements": []any{}, "updates": []any{}}}}, 400, "BadRequestException", "table-changes[0] has no identifier"},
				{"unknown route", "GET", "/v1/wh/nothing-here", nil, 400, "BadRequestException", ""},
				{"wrong method", "PUT", "/v1/wh/namespaces", nil, 405, "MethodNotAllowedException", ""},
				{"delete non-empty warehouse", "DELETE", "/management/v1/warehouses/wh", nil, 409, "NamespaceNotEmptyException", "Warehouse is not empty: wh"},
				{"bad warehouse name", "POST", "/management/v1/warehouses", map[string]any{"name": "tables", "location": "file:///tmp/x"}, 400, "BadRequestException", ""},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					r := b.do(t, c.method, c.path, c.body)
					require.Equal(t, c.status, r.status, "%s", r.body)
					typ, msg := r.errorOf(t)
					require.Equal(t, c.typ, typ)
					if c.msg != "" {
						require.Equal(t, c.msg, msg)
					}
					require.Equal(t, "application/json", r.header.Get("Content-Type"))
				})
			}
		})
	}
}

func rawJSON(s string) any { return jsonRaw(s) }
