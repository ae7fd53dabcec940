package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// udfMetadata is a UDF metadata document of the spec's shape (one scalar
// definition, two versions, a log naming both).
const udfMetadata = `{
  "function-uuid": "42fd3f91-bc10-41c1-8a52-92b57dd0a9b2",
  "format-version": 1,
  "definitions": [{
    "definition-id": "int",
    "parameters": [{"name": "x", "type": "int", "doc": "input"}],
    "return-type": "int",
    "function-type": "udf",
    "versions": [
      {"version-id": 1, "representations": [{"type": "sql", "dialect": "trino", "sql": "x + 2"}], "timestamp-ms": 1734507000123},
      {"version-id": 2, "deterministic": true, "on-null-input": "return-null",
       "representations": [{"type": "sql", "dialect": "spark", "sql": "x + 1"}], "timestamp-ms": 1735507000124}
    ],
    "current-version-id": 2
  }],
  "definition-log": [
    {"timestamp-ms": 1734507000123, "definition-versions": [{"definition-id": "int", "version-id": 1}]},
    {"timestamp-ms": 1735507000124, "definition-versions": [{"definition-id": "int", "version-id": 2}]}
  ],
  "doc": "add one",
  "secure": false
}`

// functionBody is a createFunction request for name.
func functionBody(name string) map[string]any {
	return map[string]any{"name": name, "metadata": rawJSON(udfMetadata)}
}

// specSchema returns a schema of openapi/catalog.yaml, whose function
// schemas are those of the REST spec (main after Iceberg 1.11). The
// loader follows the spec's reference to openapi/scantasks/scantasks.json.
func specSchema(t *testing.T, name string) *openapi3.Schema {
	t.Helper()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	doc, err := loader.LoadFromFile("../openapi/catalog.yaml")
	require.NoError(t, err)
	ref := doc.Components.Schemas[name]
	require.NotNil(t, ref, "schema %s", name)
	return ref.Value
}

// conforms asserts that body validates against the named spec schema.
func conforms(t *testing.T, name string, body []byte) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(body, &v))
	require.NoError(t, specSchema(t, name).VisitJSON(v), "%s: %s", name, body)
}

// TestFunctionRoutes: functions created through the management API are
// listed (paged) and loaded as the REST spec's listFunctions and
// loadFunction answer, on both stores; their names are shared with tables
// and views; a document without the UDF spec's required fields is a 400
// that creates nothing; drop removes them.
func TestFunctionRoutes(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "fx")
			create := "/management/v1/warehouses/wh/namespaces/fx/functions"
			for _, n := range []string{"add_one", "b_fn", "c_fn"} {
				r := b.do(t, "POST", create, functionBody(n))
				require.Equal(t, 200, r.status, "%s", r.body)
				conforms(t, "LoadFunctionResult", r.body)
			}

			r := b.do(t, "GET", "/v1/wh/namespaces/fx/functions/add_one", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			conforms(t, "LoadFunctionResult", r.body)
			m := r.json(t)
			require.Regexp(t, `/fx/add_one[^/]*/metadata/00000-[^/]+\.metadata\.json$`, m["metadata-location"])
			meta := m["metadata"].(map[string]any)
			require.Equal(t, "42fd3f91-bc10-41c1-8a52-92b57dd0a9b2", meta["function-uuid"])
			require.Equal(t, "add one", meta["doc"], "the document is served as it was created")

			var names [][]any
			token := ""
			for pages := 0; pages < 5; pages++ {
				path := "/v1/wh/namespaces/fx/functions?pageSize=2"
				if token != "" {
					path += "&pageToken=" + url.QueryEscape(token)
				}
				r = b.do(t, "GET", path, nil)
				require.Equal(t, 200, r.status, "%s", r.body)
				conforms(t, "ListFunctionsResponse", r.body)
				var page struct {
					Identifiers [][]any `json:"identifiers"`
					Next        *string `json:"next-page-token"`
				}
				require.NoError(t, json.Unmarshal(r.body, &page))
				names = append(names, page.Identifiers...)
				if page.Next == nil {
					break
				}
				token = *page.Next
			}
			require.Equal(t, [][]any{{"fx", "add_one"}, {"fx", "b_fn"}, {"fx", "c_fn"}}, names)
			r = b.do(t, "GET", "/v1/wh/namespaces/fx/tables", nil)
			require.NotContains(t, string(r.body), "add_one", "functions are not tables")

			// One name space for tables, views and functions.
			r = b.createTable(t, "fx", "add_one", nil)
			require.Equal(t, 409, r.status, "%s", r.body)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "Function with same name", "the clash names what holds the name")
			r = b.do(t, "POST", "/v1/wh/namespaces/fx/tables", map[string]any{"name": "add_one", "schema": rawJSON(testSchema),
				"stage-create": true})
			require.Equal(t, 409, r.status, "a staged create checks functions too: %s", r.body)
			_, msg = r.errorOf(t)
			require.Contains(t, msg, "Function with same name")
			b.createTable(t, "fx", "tbl", nil)
			r = b.do(t, "POST", "/v1/wh/tables/rename", map[string]any{
				"source":      map[string]any{"namespace": []string{"fx"}, "name": "tbl"},
				"destination": map[string]any{"namespace": []string{"fx"}, "name": "add_one"}})
			require.Equal(t, 409, r.status, "%s", r.body)
			_, msg = r.errorOf(t)
			require.Contains(t, msg, "Function already exists")
			r = b.do(t, "POST", create, functionBody("tbl"))
			require.Equal(t, 409, r.status, "%s", r.body)
			typ, msg := r.errorOf(t)
			require.Equal(t, "AlreadyExistsException", typ)
			require.Contains(t, msg, "Table with same name")

			// Missing required fields: 400 with the reason, nothing created.
			for _, field := range []string{"function-uuid", "definitions", "definition-log", "format-version"} {
				var doc map[string]any
				require.NoError(t, json.Unmarshal([]byte(udfMetadata), &doc))
				delete(doc, field)
				r = b.do(t, "POST", create, map[string]any{"name": "bad", "metadata": doc})
				require.Equal(t, 400, r.status, "%s: %s", field, r.body)
				require.Contains(t, string(r.body), "invalid-function-metadata")
				require.Contains(t, string(r.body), field)
			}
			r = b.do(t, "GET", "/v1/wh/namespaces/fx/functions/bad", nil)
			require.Equal(t, 404, r.status)
			typ, _ = r.errorOf(t)
			require.Equal(t, "NoSuchFunctionException", typ)
			r = b.do(t, "GET", "/v1/wh/namespaces/nope/functions/add_one", nil)
			require.Equal(t, 404, r.status)
			typ, _ = r.errorOf(t)
			require.Equal(t, "NoSuchNamespaceException", typ)
			r = b.do(t, "GET", "/v1/wh/namespaces/nope/functions", nil)
			require.Equal(t, 404, r.status)

			// A namespace holding a function is not empty.
			r = b.do(t, "DELETE", "/v1/wh/namespaces/fx", nil)
			require.Equal(t, 409, r.status, "%s", r.body)

			for _, n := range []string{"add_one", "b_fn", "c_fn"} {
				r = b.do(t, "DELETE", fmt.Sprintf("%s/%s", create, n), nil)
				require.Equal(t, 204, r.status, "%s", r.body)
			}
			r = b.do(t, "DELETE", create+"/add_one", nil)
			require.Equal(t, 404, r.status)
			r = b.do(t, "GET", "/v1/wh/namespaces/fx/functions", nil)
			require.Equal(t, 200, r.status)
			require.JSONEq(t, `{"identifiers":[]}`, string(r.body))
		})
	}
}

// TestFunctionSpecSchemas: the spec schemas the route test validates
// against reject a document without a required field, so that test can
// fail.
func TestFunctionSpecSchemas(t *testing.T) {
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(udfMetadata), &doc))
	s := specSchema(t, "FunctionMetadata")
	require.NoError(t, s.VisitJSON(doc))
	delete(doc, "definition-log")
	require.Error(t, s.VisitJSON(doc))
}
