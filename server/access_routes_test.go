package server_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// The route × caller matrix: every operation of openapi/catalog.yaml is
// called by every kind of caller, and each cell has the status we expect.
//
// Grants (made by grantMatrixRoles): analysts (reader) hold the read
// privileges on namespace wh/sales, engineers (writer) those plus create,
// write-metadata, write-data and view create/replace (no drop, so no
// rename: that is drop on the source plus create on the destination);
// stewards (namespace admin) hold every privilege on wh/sales; platform
// (server admin) holds server-admin. Namespace wh/hr holds table "secret" and view "secretv",
// granted to nobody but the server admin.

// want is the expected status per authenticated caller.
type want struct{ reader, writer, nsAdmin, admin int }

// Expected-status shorthands.
var (
	allOK      = want{200, 200, 200, 200}
	allNoBody  = want{204, 204, 204, 204}
	writeOK    = want{403, 200, 200, 200}
	writeNoBdy = want{403, 204, 204, 204}
	adminNS    = want{403, 403, 200, 200}
	adminNSNo  = want{403, 403, 204, 204}
	serverOnly = want{403, 403, 403, 200}
	hidden     = want{404, 404, 404, 200}
	hiddenNo   = want{404, 404, 404, 204}
	// management routes only the server admin may call
	serverCreated = want{403, 403, 403, 201}
	serverNoBody  = want{403, 403, 403, 204}
)

// matrixEnv is what a route case needs to build its request.
type matrixEnv struct {
	// fresh objects made as the operator for cell n (see prepareCell)
	metadataOfDropped func(t *testing.T, n int) string
	viewMetaOfDropped func(t *testing.T, n int) string
	// snapshotOf commits a snapshot to table t<n> and returns its id
	snapshotOf func(t *testing.T, n int) int64
}

type routeCase struct {
	op     string // operationId in openapi/catalog.yaml
	name   string // distinguishes several cases of one operation
	method string
	path   func(n int) string
	body   func(t *testing.T, e *matrixEnv, n int) any
	want   want
}

func fixed(p string) func(int) string { return func(int) string { return p } }

const salesT = "/v1/wh/namespaces/sales/tables/"

// matrixRoutes lists the cases. Objects named with %d are made fresh for
// each cell by prepareCell (t%d table, v%d view, c%d child namespace,
// w%d warehouse, x%d v4 table), so a drop in one cell cannot change another.
func matrixRoutes() []routeCase {
	tbl := func(n int) string { return fmt.Sprintf(salesT+"t%d", n) }
	commit := func(*testing.T, *matrixEnv, int) any {
		return map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}}}}
	}
	ident := func(ns, name string) map[string]any { return map[string]any{"namespace": []string{ns}, "name": name} }
	return []routeCase{
		{op: "getConfig", method: "GET", path: fixed("/v1/config?warehouse=wh"), want: allOK},
		{op: "listNamespaces", method: "GET", path: fixed("/v1/wh/namespaces"), want: allOK},
		{op: "createNamespace", name: "child", method: "POST", path: fixed("/v1/wh/namespaces"), want: adminNS,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"namespace": []string{"sales", fmt.Sprintf("new%d", n)}}
			}},
		{op: "createNamespace", name: "top", method: "POST", path: fixed("/v1/wh/namespaces"), want: serverOnly,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"namespace": []string{fmt.Sprintf("top%d", n)}}
			}},
		{op: "loadNamespaceMetadata", method: "GET", path: fixed("/v1/wh/namespaces/sales"), want: allOK},
		{op: "loadNamespaceMetadata", name: "hidden", method: "GET", path: fixed("/v1/wh/namespaces/hr"), want: hidden},
		{op: "namespaceExists", method: "HEAD", path: fixed("/v1/wh/namespaces/sales"), want: allNoBody},
		{op: "dropNamespace", method: "DELETE", path: func(n int) string { return fmt.Sprintf("/v1/wh/namespaces/sales%%1Fc%d", n) }, want: adminNSNo},
		{op: "updateProperties", method: "POST", path: fixed("/v1/wh/namespaces/sales/properties"), want: adminNS,
			body: func(*testing.T, *matrixEnv, int) any {
				return map[string]any{"updates": map[string]string{"owner": "x"}}
			}},
		{op: "listTables", method: "GET", path: fixed("/v1/wh/namespaces/sales/tables"), want: allOK},
		{op: "createTable", method: "POST", path: fixed("/v1/wh/namespaces/sales/tables"), want: writeOK,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"name": fmt.Sprintf("new%d", n), "schema": rawJSON(testSchema)}
			}},
		{op: "registerTable", method: "POST", path: fixed("/v1/wh/namespaces/sales/register"), want: writeOK,
			body: func(t *testing.T, e *matrixEnv, n int) any {
				return map[string]any{"name": fmt.Sprintf("reg%d", n), "metadata-location": e.metadataOfDropped(t, n)}
			}},
		{op: "loadTable", method: "GET", path: tbl, want: allOK},
		{op: "loadTable", name: "hidden", method: "GET", path: fixed("/v1/wh/namespaces/hr/tables/secret"), want: hidden},
		{op: "tableExists", method: "HEAD", path: tbl, want: allNoBody},
		{op: "tableExists", name: "hidden", method: "HEAD", path: fixed("/v1/wh/namespaces/hr/tables/secret"), want: hiddenNo},
		{op: "updateTable", method: "POST", path: tbl, body: commit, want: writeOK},
		{op: "updateTable", name: "hidden", method: "POST", path: fixed("/v1/wh/namespaces/hr/tables/secret"), body: commit, want: hidden},
		{op: "dropTable", method: "DELETE", path: tbl, want: adminNSNo},
		// Unregister is a drop that answers the metadata: table-drop and
		// table-read-metadata.
		{op: "unregisterTable", method: "POST", path: func(n int) string { return tbl(n) + "/unregister" }, want: adminNS},
		{op: "reportMetrics", method: "POST", path: func(n int) string { return tbl(n) + "/metrics" }, want: allNoBody,
			body: func(t *testing.T, e *matrixEnv, n int) any {
				snap := int64(1) // needsOf reads the body without an env
				if e != nil {
					snap = e.snapshotOf(t, n)
				}
				return map[string]any{"report-type": "commit-report", "table-name": fmt.Sprintf("sales.t%d", n), "snapshot-id": snap, "sequence-number": 1, "operation": "append", "metrics": map[string]any{}}
			}},
		// v4 routes on a fresh v4 table x%d: an allowed caller reaches
		// validation (an empty commit is a 400), a denied one does not.
		{op: "commitFiles", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/files", n) }, want: want{403, 400, 400, 400},
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"add-files": []any{}} }},
		{op: "commitColumnFiles", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/column-files", n) }, want: want{403, 400, 400, 400},
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"column-files": []any{}} }},
		{op: "planCompaction", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/compaction-plan", n) }, want: writeOK},
		{op: "commitCompaction", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/compaction", n) }, want: want{403, 400, 400, 400},
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"rewrites": []any{}} }},
		{op: "exportTable", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/export", n) }, want: writeOK,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"destination": map[string]any{"namespace": []string{"sales"}, "name": fmt.Sprintf("exported%d", n)}}
			}},
		{op: "listColumnFiles", method: "GET", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/column-files", n) }, want: allOK},
		{op: "getColumnFileDebt", method: "GET", path: func(n int) string {
			return fmt.Sprintf("/management/v1/warehouses/wh/namespaces/sales/tables/x%d/column-file-debt", n)
		}, want: allOK},
		{op: "getColumnFileDebt", name: "hidden", method: "GET", path: fixed("/management/v1/warehouses/wh/namespaces/hr/tables/secret/column-file-debt"),
			want: want{404, 404, 404, 400}},
		{op: "planTableScan", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/plan", n) }, want: allOK,
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{} }},
		{op: "maintainTable", method: "POST", path: func(n int) string {
			return fmt.Sprintf("/management/v1/warehouses/wh/namespaces/sales/tables/t%d/maintain", n)
		},
			want: writeOK, body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"dry-run": true} }},
		{op: "maintainTable", name: "hidden", method: "POST", path: fixed("/management/v1/warehouses/wh/namespaces/hr/tables/secret/maintain"),
			want: hidden, body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"dry-run": true} }},
		{op: "removeOrphanFiles", method: "POST", path: func(n int) string {
			return fmt.Sprintf("/management/v1/warehouses/wh/namespaces/sales/tables/t%d/remove-orphan-files", n)
		}, want: writeOK, body: func(*testing.T, *matrixEnv, int) any { return map[string]any{} }},
		{op: "removeOrphanFiles", name: "hidden", method: "POST", path: fixed("/management/v1/warehouses/wh/namespaces/hr/tables/secret/remove-orphan-files"),
			want: hidden, body: func(*testing.T, *matrixEnv, int) any { return map[string]any{} }},
		// Reports are read as the table is loaded: table-read-metadata.
		{op: "listTableReports", method: "GET", path: func(n int) string {
			return fmt.Sprintf("/management/v1/warehouses/wh/namespaces/sales/tables/t%d/reports", n)
		}, want: allOK},
		{op: "listTableReports", name: "hidden", method: "GET", path: fixed("/management/v1/warehouses/wh/namespaces/hr/tables/secret/reports"),
			want: hidden},
		// Plans complete synchronously and are not kept: polling any plan id
		// is 404 NoSuchPlanId, cancelling succeeds, a forged plan task is
		// 404 NoSuchPlanTask; all after the read-data check.
		{op: "fetchPlanningResult", method: "GET", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/plan/p1", n) }, want: want{404, 404, 404, 404}},
		{op: "cancelPlanning", method: "DELETE", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/plan/p1", n) }, want: allNoBody},
		{op: "cancelPlanning", name: "hidden", method: "DELETE", path: fixed("/v1/wh/namespaces/hr/tables/secret/plan/p1"), want: hiddenNo},
		{op: "fetchScanTasks", method: "POST", path: func(n int) string { return fmt.Sprintf(salesT+"x%d/tasks", n) }, want: want{404, 404, 404, 404},
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"plan-task": "forged"} }},
		{op: "loadCredentials", method: "GET", path: func(n int) string { return tbl(n) + "/credentials" }, want: allOK},
		// The matrix warehouse is on local files, which nobody signs for:
		// the refusal (403) comes after the authorization (404 for a hidden
		// table). Read versus write levels: TestRemoteSigningS3.
		{op: "signRequest", method: "POST", path: func(n int) string { return tbl(n) + "/sign" }, want: want{403, 403, 403, 403},
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"region": "us-east-1", "method": "GET", "headers": map[string]any{},
					"uri": fmt.Sprintf("http://127.0.0.1:1/warehouse/sales/t%d/data/a.parquet", n)}
			}},
		{op: "signRequest", name: "hidden", method: "POST", path: fixed("/v1/wh/namespaces/hr/tables/secret/sign"), want: want{404, 404, 404, 403},
			body: func(*testing.T, *matrixEnv, int) any {
				return map[string]any{"region": "us-east-1", "method": "GET", "headers": map[string]any{},
					"uri": "http://127.0.0.1:1/warehouse/hr/secret/data/a.parquet"}
			}},
		{op: "nativeWriteEligibility", method: "GET", path: func(n int) string { return tbl(n) + "/native-write-eligibility" }, want: allOK},
		{op: "renameTable", method: "POST", path: fixed("/v1/wh/tables/rename"), want: adminNSNo,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"source": ident("sales", fmt.Sprintf("t%d", n)), "destination": ident("sales", fmt.Sprintf("moved%d", n))}
			}},
		{op: "renameTable", name: "out-of-grant", method: "POST", path: fixed("/v1/wh/tables/rename"), want: want{403, 403, 404, 204},
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"source": ident("sales", fmt.Sprintf("t%d", n)), "destination": ident("hr", fmt.Sprintf("moved%d", n))}
			}},
		{op: "commitTransaction", method: "POST", path: fixed("/v1/wh/transactions/commit"), want: writeNoBdy,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				c := map[string]any{"identifier": ident("sales", fmt.Sprintf("t%d", n)), "requirements": []any{},
					"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}}}}
				return map[string]any{"table-changes": []any{c}}
			}},
		// Functions: view privileges on the namespace (docs/access.md).
		{op: "listFunctions", method: "GET", path: fixed("/v1/wh/namespaces/sales/functions"), want: allOK},
		{op: "listFunctions", name: "hidden", method: "GET", path: fixed("/v1/wh/namespaces/hr/functions"), want: hidden},
		{op: "loadFunction", method: "GET", path: func(n int) string { return fmt.Sprintf("/v1/wh/namespaces/sales/functions/f%d", n) }, want: allOK},
		{op: "loadFunction", name: "hidden", method: "GET", path: fixed("/v1/wh/namespaces/hr/functions/secretf"), want: hidden},
		{op: "createFunction", method: "POST", path: fixed("/management/v1/warehouses/wh/namespaces/sales/functions"), want: writeOK,
			body: func(_ *testing.T, _ *matrixEnv, n int) any { return functionBody(fmt.Sprintf("newf%d", n)) }},
		{op: "dropFunction", method: "DELETE", path: func(n int) string {
			return fmt.Sprintf("/management/v1/warehouses/wh/namespaces/sales/functions/f%d", n)
		}, want: adminNSNo},
		{op: "listViews", method: "GET", path: fixed("/v1/wh/namespaces/sales/views"), want: allOK},
		{op: "createView", method: "POST", path: fixed("/v1/wh/namespaces/sales/views"), want: writeOK,
			body: func(_ *testing.T, _ *matrixEnv, n int) any { return viewBody(fmt.Sprintf("newv%d", n)) }},
		{op: "loadView", method: "GET", path: func(n int) string { return fmt.Sprintf("/v1/wh/namespaces/sales/views/v%d", n) }, want: allOK},
		{op: "loadView", name: "hidden", method: "GET", path: fixed("/v1/wh/namespaces/hr/views/secretv"), want: hidden},
		{op: "viewExists", method: "HEAD", path: func(n int) string { return fmt.Sprintf("/v1/wh/namespaces/sales/views/v%d", n) }, want: allNoBody},
		{op: "replaceView", method: "POST", path: func(n int) string { return fmt.Sprintf("/v1/wh/namespaces/sales/views/v%d", n) }, want: writeOK,
			body: func(*testing.T, *matrixEnv, int) any {
				return map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}}}}
			}},
		{op: "dropView", method: "DELETE", path: func(n int) string { return fmt.Sprintf("/v1/wh/namespaces/sales/views/v%d", n) }, want: adminNSNo},
		{op: "registerView", method: "POST", path: fixed("/v1/wh/namespaces/sales/register-view"), want: writeOK,
			body: func(t *testing.T, e *matrixEnv, n int) any {
				return map[string]any{"name": fmt.Sprintf("regv%d", n), "metadata-location": e.viewMetaOfDropped(t, n)}
			}},
		{op: "renameView", method: "POST", path: fixed("/v1/wh/views/rename"), want: adminNSNo,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"source": ident("sales", fmt.Sprintf("v%d", n)), "destination": ident("sales", fmt.Sprintf("movedv%d", n))}
			}},
		{op: "listWarehouses", method: "GET", path: fixed("/management/v1/warehouses"), want: serverOnly},
		{op: "createWarehouse", method: "POST", path: fixed("/management/v1/warehouses"), want: serverOnly,
			body: func(_ *testing.T, _ *matrixEnv, n int) any {
				return map[string]any{"name": fmt.Sprintf("neww%d", n), "location": fmt.Sprintf("file:///tmp/lakehold-matrix/neww%d", n)}
			}},
		{op: "getWarehouse", method: "GET", path: func(n int) string { return fmt.Sprintf("/management/v1/warehouses/w%d", n) }, want: hidden},
		{op: "deleteWarehouse", method: "DELETE", path: func(n int) string { return fmt.Sprintf("/management/v1/warehouses/w%d", n) }, want: hiddenNo},
		{op: "getStorageProfile", method: "GET", path: func(n int) string { return fmt.Sprintf("/management/v1/warehouses/w%d/storage-profile", n) }, want: hidden},
		{op: "setStorageProfile", method: "PUT", path: func(n int) string { return fmt.Sprintf("/management/v1/warehouses/w%d/storage-profile", n) }, want: hidden,
			body: func(*testing.T, *matrixEnv, int) any { return s3Profile() }},
		// A warehouse the caller holds nothing in does not exist for it.
		// Principals, roles, grants and assignments: manage-grants on the server.
		{op: "listPrincipals", method: "GET", path: fixed("/management/v1/principals"), want: serverOnly},
		{op: "createPrincipal", method: "POST", path: fixed("/management/v1/principals"), want: serverCreated,
			body: func(_ *testing.T, _ *matrixEnv, n int) any { return map[string]any{"name": fmt.Sprintf("newp%d", n)} }},
		{op: "getPrincipal", method: "GET", path: mgmt("principals/p%d"), want: serverOnly},
		{op: "deletePrincipal", method: "DELETE", path: mgmt("principals/p%d"), want: serverNoBody},
		{op: "rotatePrincipalSecret", method: "POST", path: mgmt("principals/p%d/rotate"), want: serverOnly},
		{op: "listRoles", method: "GET", path: fixed("/management/v1/roles"), want: serverOnly},
		{op: "createRole", method: "POST", path: fixed("/management/v1/roles"), want: serverOnly,
			body: func(_ *testing.T, _ *matrixEnv, n int) any { return map[string]any{"name": fmt.Sprintf("newr%d", n)} }},
		{op: "getRole", method: "GET", path: mgmt("roles/r%d"), want: serverOnly},
		{op: "deleteRole", method: "DELETE", path: mgmt("roles/r%d"), want: serverNoBody},
		{op: "listGrants", method: "GET", path: mgmt("roles/r%d/grants"), want: serverOnly},
		{op: "addGrant", method: "POST", path: mgmt("roles/r%d/grants"), want: serverNoBody, body: grantBody},
		{op: "revokeGrant", method: "POST", path: mgmt("roles/r%d/grants/revoke"), want: serverNoBody, body: grantBody},
		{op: "listAssignments", method: "GET", path: mgmt("roles/r%d/assignments"), want: serverOnly},
		{op: "addAssignment", method: "POST", path: mgmt("roles/r%d/assignments"), want: serverNoBody,
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"kind": "group", "name": "analysts"} }},
		// Any caller may ask what it holds; the answer is about itself.
		{op: "getEffectivePrivileges", method: "GET", path: fixed("/management/v1/privileges?kind=table&warehouse=wh&namespace=sales&name=t"), want: allOK},
		{op: "listAuditEvents", method: "GET", path: fixed("/management/v1/audit"), want: serverOnly},
		// Anyone may ask for events; each caller sees those of the objects
		// it may read (TestEventsAuthorized).
		{op: "getEvents", method: "POST", path: fixed("/v1/wh/events"), want: allOK,
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"page-size": 10} }},
		{op: "listJobs", method: "GET", path: fixed("/management/v1/jobs?warehouse=wh"), want: serverOnly},
		// deleted-list and deleted-undrop are held on the warehouse or the
		// server: only the server admin here; undrop of an unknown id is 404.
		{op: "listDeletedObjects", method: "GET", path: fixed("/management/v1/warehouses/wh/deleted"), want: serverOnly},
		{op: "undropObject", method: "POST", path: fixed("/management/v1/warehouses/wh/deleted/no-such-id/undrop"), want: want{403, 403, 403, 404},
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{} }},
		{op: "deleteAssignment", method: "DELETE", path: mgmt("roles/r%d/assignments/group/analysts"), want: serverNoBody},
		// Importing needs manage-warehouses on the warehouse; the admin's
		// source (a closed port) cannot be reached: 422.
		{op: "importCatalog", method: "POST", path: fixed("/management/v1/warehouses/wh/import"), want: want{403, 403, 403, 422},
			body: func(*testing.T, *matrixEnv, int) any { return map[string]any{"source-uri": "http://127.0.0.1:1"} }},
	}
}

// mgmt renders a management path naming cell n's fresh object.
func mgmt(format string) func(int) string {
	return func(n int) string { return "/management/v1/" + fmt.Sprintf(format, n) }
}

func grantBody(*testing.T, *matrixEnv, int) any {
	return map[string]any{"privilege": "table-read-metadata", "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"sales"}}}
}

func viewBody(name string) map[string]any {
	return map[string]any{
		"name": name, "schema": rawJSON(testSchema), "properties": map[string]string{},
		"view-version": rawJSON(`{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["sales"],"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`),
	}
}

// TestMatrixCoversEveryRoute fails when an operation of the API has no
// case in the matrix, so a new route cannot ship unchecked.
func TestMatrixCoversEveryRoute(t *testing.T) {
	spec, err := os.ReadFile("../openapi/catalog.yaml")
	require.NoError(t, err)
	covered := map[string]bool{}
	for _, rc := range matrixRoutes() {
		covered[rc.op] = true
	}
	for _, m := range regexp.MustCompile(`operationId:\s*(\w+)`).FindAllSubmatch(spec, -1) {
		require.True(t, covered[string(m[1])], "operation %s has no case in the access matrix", m[1])
	}
}
