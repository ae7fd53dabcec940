package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/reports"
	"github.com/lakehold/catalog/store"
)

// setupReports starts a catalog keeping metrics reports for retention
// (0: none kept) with warehouse wh, under the RBAC authorizer when rbac
// is set (callers named by X-Test-Principal), else allow-all.
func setupReports(t *testing.T, backend string, rbac bool, retention time.Duration) *bundle {
	t.Helper()
	return setupReportsWith(t, backend, rbac, service.Options{ReportsRetention: retention})
}

// setupReportsWith is setupReports with the reports options of opts.
func setupReportsWith(t *testing.T, backend string, rbac bool, opts service.Options) *bundle {
	t.Helper()
	return setupOptions(t, backend, rbac, opts)
}

// reportFixture is a report shaped as Iceberg Java's parsers write it
// (internal/metricsreport/testdata).
func reportFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "metricsreport", "testdata", name))
	require.NoError(t, err)
	return string(b)
}

// fixtureSnapshot is the snapshot the report fixtures name.
const fixtureSnapshot = 7523141588432391877

// commitSnapshots adds snapshots ids, in order, to table name of
// namespace ns in the warehouse of prefix, each made main's head by its
// own commit: a report must name a snapshot of its table. headers go
// with each request.
func commitSnapshots(t *testing.T, b *bundle, prefix, ns, name string, ids []int64, headers ...string) {
	t.Helper()
	path := "/v1/" + prefix + "/namespaces/" + ns + "/tables/" + name
	r := b.do(t, "GET", path, nil, headers...)
	require.Equal(t, 200, r.status, "%s", r.body)
	loc := r.json(t)["metadata"].(map[string]any)["location"].(string)
	for i, id := range ids {
		snap := map[string]any{"snapshot-id": id, "sequence-number": i + 1, "schema-id": 0,
			"timestamp-ms": time.Now().UnixMilli(), "manifest-list": loc + "/metadata/snap-" + strconv.FormatInt(id, 10) + ".avro",
			"summary": map[string]any{"operation": "append"}}
		if i > 0 {
			snap["parent-snapshot-id"] = ids[i-1]
		}
		updates := []any{map[string]any{"action": "add-snapshot", "snapshot": snap}, mainRef(id)}
		r := b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": updates}, headers...)
		require.Equal(t, 200, r.status, "snapshot %d: %s", id, r.body)
	}
}

// fixtureFor is the report fixture name rewritten for table ns.table
// (the fixtures name lakehold.sales.orders).
func fixtureFor(t *testing.T, name, ns, table string) string {
	t.Helper()
	return strings.Replace(reportFixture(t, name), `"lakehold.sales.orders"`, `"lakehold.`+ns+`.`+table+`"`, 1)
}

// reportsAnswer is the management route's answer, numbers kept exact.
type reportsAnswer struct {
	Reports []struct {
		ID         json.Number     `json:"id"`
		Type       string          `json:"report-type"`
		ReceivedAt json.Number     `json:"received-at-ms"`
		SnapshotID json.Number     `json:"snapshot-id"`
		Report     json.RawMessage `json:"report"`
	} `json:"reports"`
	Next *string `json:"next-page-token"`
}

func (b *bundle) reports(t *testing.T, table, query string, headers ...string) reportsAnswer {
	t.Helper()
	r := b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/sales/tables/"+table+"/reports"+query, nil, headers...)
	require.Equal(t, 200, r.status, "%s", r.body)
	var a reportsAnswer
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&a))
	return a
}

// TestReportsStoredAndListed: a Java-shaped scan report and commit report
// posted to the REST route come back through the management route, newest
// first, in the documented shape, 64-bit ids exact, without credentials;
// the filters and pages work, and a rename keeps them.
func TestReportsStoredAndListed(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupReports(t, backend, false, time.Hour)
			b.createNamespace(t, "sales")
			require.Equal(t, 200, b.createTable(t, "sales", "orders", nil).status)
			commitSnapshots(t, b, "wh", "sales", "orders", []int64{fixtureSnapshot})
			metrics := "/v1/wh/namespaces/sales/tables/orders/metrics"
			r := b.do(t, "POST", metrics, reportFixture(t, "scan-report.json"))
			require.Equal(t, 204, r.status, "%s", r.body)
			r = b.do(t, "POST", metrics, reportFixture(t, "commit-report.json"))
			require.Equal(t, 204, r.status, "%s", r.body)

			raw := b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/sales/tables/orders/reports", nil)
			require.Equal(t, 200, raw.status)
			for _, secret := range []string{"AKIAEXAMPLESECRET", "FQoGZXIvYXdzEXAMPLE", "eyJhbGci", "secret.key", "session-token"} {
				require.NotContains(t, string(raw.body), secret)
			}
			// The exact shape: reports[] of five keys and the token.
			var shape map[string][]map[string]any
			require.NoError(t, json.Unmarshal(raw.body, &shape))
			require.Len(t, shape["reports"], 2)
			keys := []string{}
			for k := range shape["reports"][0] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			require.Equal(t, []string{"id", "received-at-ms", "report", "report-type", "snapshot-id"}, keys)

			all := b.reports(t, "orders", "")
			require.Nil(t, all.Next)
			require.Equal(t, "commit-report", all.Reports[0].Type, "newest first")
			require.Equal(t, "scan-report", all.Reports[1].Type)
			for _, rep := range all.Reports {
				require.Equal(t, "7523141588432391877", rep.SnapshotID.String())
				at, err := rep.ReceivedAt.Int64()
				require.NoError(t, err)
				require.WithinDuration(t, time.Now(), time.UnixMilli(at), time.Minute)
			}
			first, _ := all.Reports[0].ID.Int64()
			second, _ := all.Reports[1].ID.Int64()
			require.Greater(t, first, second)
			require.Contains(t, string(all.Reports[0].Report), `"operation":"append"`)
			require.Contains(t, string(all.Reports[0].Report), `"engine-name":"spark"`)
			require.Contains(t, string(all.Reports[1].Report), `"projected-field-names":["order_id","customer_id","amount"]`)
			require.Contains(t, string(all.Reports[1].Report), `"filter":{"type":"and"`, "the filter is kept")
			require.NotContains(t, string(all.Reports[1].Report), "report-type")

			scans := b.reports(t, "orders", "?type=scan-report")
			require.Len(t, scans.Reports, 1)
			require.Equal(t, "scan-report", scans.Reports[0].Type)
			page := b.reports(t, "orders", "?page-size=1")
			require.Len(t, page.Reports, 1)
			require.NotNil(t, page.Next)
			rest := b.reports(t, "orders", "?page-size=1&page-token="+*page.Next)
			require.Len(t, rest.Reports, 1)
			require.Equal(t, all.Reports[1].ID, rest.Reports[0].ID)
			require.Nil(t, rest.Next)
			future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
			require.Empty(t, b.reports(t, "orders", "?since-ms="+future).Reports)

			for _, q := range []string{"?page-size=0", "?page-size=1001", "?type=plan-report", "?since-ms=-1", "?page-token=nope", "?since-ms=soon"} {
				r := b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/sales/tables/orders/reports"+q, nil)
				require.Equal(t, 400, r.status, "%s: %s", q, r.body)
				r.errorOf(t)
			}
			require.Equal(t, 404, b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/sales/tables/nope/reports", nil).status)
			require.Equal(t, 404, b.do(t, "GET", "/management/v1/warehouses/nowh/namespaces/sales/tables/orders/reports", nil).status)

			require.Equal(t, 204, b.do(t, "POST", "/v1/wh/tables/rename", map[string]any{
				"source":      map[string]any{"namespace": []string{"sales"}, "name": "orders"},
				"destination": map[string]any{"namespace": []string{"sales"}, "name": "orders2"}}).status)
			require.Len(t, b.reports(t, "orders2", "").Reports, 2, "a rename keeps the reports")
		})
	}
}

// TestReportMetricsRefusesMalformed: a malformed report is a 400
// ErrorModel naming the field, an oversized one a 413, and nothing is
// stored; a report for a missing table is 404.
func TestReportMetricsRefusesMalformed(t *testing.T) {
	b := setupReports(t, "sqlite", false, time.Hour)
	b.createNamespace(t, "sales")
	require.Equal(t, 200, b.createTable(t, "sales", "orders", nil).status)
	commitSnapshots(t, b, "wh", "sales", "orders", []int64{fixtureSnapshot})
	metrics := "/v1/wh/namespaces/sales/tables/orders/metrics"
	scan := reportFixture(t, "scan-report.json")
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{strings.Replace(scan, `"snapshot-id": 7523141588432391877`, `"snapshot-id": "7523141588432391877"`, 1), 400, "field snapshot-id must be a 64-bit integer"},
		{strings.Replace(scan, `"schema-id": 0,`, ``, 1), 400, "missing field schema-id"},
		{strings.Replace(scan, `"unit": "bytes", "value": 1853990`, `"unit": "bytes", "value": "lots"`, 1), 400, "field metrics.total-file-size-in-bytes.value must be a 64-bit integer"},
		{strings.Replace(scan, `"scan-report"`, `"plan-report"`, 1), 400, "Invalid report-type"},
		{`[]`, 400, "must be a JSON object"},
		{strings.Replace(scan, `"lakehold.sales.orders"`, `"`+strings.Repeat("x", 70_000)+`"`, 1), 413, "at most 65536 bytes are stored per report"},
	} {
		r := b.do(t, "POST", metrics, tc.body)
		require.Equal(t, tc.status, r.status, "%s", r.body)
		_, msg := r.errorOf(t)
		require.Contains(t, msg, tc.want)
	}
	require.Empty(t, b.reports(t, "orders", "").Reports)
	r := b.do(t, "POST", "/v1/wh/namespaces/sales/tables/nope/metrics", scan)
	require.Equal(t, 404, r.status)
	typ, _ := r.errorOf(t)
	require.Equal(t, "NoSuchTableException", typ)
}

// TestReportsFollowGrants: the management route answers a caller exactly
// as loadTable does: the reports to one who may read the table's
// metadata, loadTable's 403 or 404 to the others.
func TestReportsFollowGrants(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupReports(t, backend, true, time.Hour)
			as := func(who, method, path string, body any) response {
				return b.do(t, method, path, body, "X-Test-Principal", who)
			}
			for _, ns := range []string{"sales", "hr"} {
				require.Equal(t, 200, as("local", "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{ns}}).status)
				require.Equal(t, 200, as("local", "POST", "/v1/wh/namespaces/"+ns+"/tables", map[string]any{"name": "t", "schema": jsonRaw(testSchema)}).status)
				commitSnapshots(t, b, "wh", ns, "t", []int64{fixtureSnapshot}, "X-Test-Principal", "local")
				r := as("local", "POST", "/v1/wh/namespaces/"+ns+"/tables/t/metrics", fixtureFor(t, "commit-report.json", ns, "t"))
				require.Equal(t, 204, r.status, "%s", r.body)
			}
			require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "readers"}).status)
			for _, priv := range []string{"table-read-metadata", "namespace-list"} {
				require.Equal(t, 204, as("local", "POST", "/management/v1/roles/readers/grants", map[string]any{
					"privilege": priv, "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"sales"}}}).status)
			}
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/readers/assignments", map[string]any{"kind": "builtin", "name": "alice"}).status)
			// bob may list sales but not read its tables.
			require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "listers"}).status)
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/listers/grants", map[string]any{
				"privilege": "namespace-list", "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"sales"}}}).status)
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/listers/assignments", map[string]any{"kind": "builtin", "name": "bob"}).status)

			require.Len(t, b.reports(t, "t", "", "X-Test-Principal", "builtin:alice").Reports, 1)
			statuses := map[string]int{}
			for _, who := range []string{"builtin:alice", "builtin:bob", "builtin:carol"} {
				for _, ns := range []string{"sales", "hr"} {
					for _, name := range []string{"t", "missing"} {
						load := as(who, "GET", "/v1/wh/namespaces/"+ns+"/tables/"+name, nil)
						reps := as(who, "GET", "/management/v1/warehouses/wh/namespaces/"+ns+"/tables/"+name+"/reports", nil)
						require.Equal(t, load.status, reps.status, "%s on %s.%s: %s", who, ns, name, reps.body)
						if reps.status != 200 {
							reps.errorOf(t)
							require.NotContains(t, string(reps.body), "append", "no report leaks in a refusal")
						}
						statuses[who+" "+ns+"."+name] = reps.status
					}
				}
			}
			require.Equal(t, 200, statuses["builtin:alice sales.t"])
			require.Contains(t, []int{403, 404}, statuses["builtin:alice hr.t"])
			require.Contains(t, []int{403, 404}, statuses["builtin:bob sales.t"])
			require.Contains(t, []int{403, 404}, statuses["builtin:carol sales.t"])
			// Reporting needs table-read-metadata too.
			require.Contains(t, []int{403, 404}, as("builtin:bob", "POST", "/v1/wh/namespaces/sales/tables/t/metrics", fixtureFor(t, "scan-report.json", "sales", "t")).status)
			require.Len(t, b.reports(t, "t", ""+"", "X-Test-Principal", "local").Reports, 1, "a refused report is not stored")
		})
	}
}

// TestReportsPruned: the prune job removes reports past the retention,
// keeps newer ones and recurs.
func TestReportsPruned(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupReports(t, backend, false, 300*time.Millisecond)
			b.createNamespace(t, "sales")
			require.Equal(t, 200, b.createTable(t, "sales", "t", nil).status)
			commitSnapshots(t, b, "wh", "sales", "t", []int64{fixtureSnapshot})
			metrics := "/v1/wh/namespaces/sales/tables/t/metrics"
			require.Equal(t, 204, b.do(t, "POST", metrics, fixtureFor(t, "scan-report.json", "sales", "t")).status)
			time.Sleep(400 * time.Millisecond)
			require.Equal(t, 204, b.do(t, "POST", metrics, fixtureFor(t, "commit-report.json", "sales", "t")).status)
			jobs := b.svc.JobHandlers()
			require.Contains(t, jobs, reports.JobPruneReports)
			err := jobs[reports.JobPruneReports](context.Background(), &store.JobInfo{Kind: reports.JobPruneReports})
			var snooze *store.JobSnooze
			require.ErrorAs(t, err, &snooze, "the prune job recurs")
			require.Equal(t, time.Hour, snooze.After)
			left := b.reports(t, "t", "")
			require.Len(t, left.Reports, 1)
			require.Equal(t, "commit-report", left.Reports[0].Type)
		})
	}
}

// noReportRows requires that no stored report outlived its table: a prune
// with a cut-off before every report would sweep such rows and count them.
func noReportRows(t *testing.T, b *bundle) {
	t.Helper()
	n, err := b.store.PruneReports(context.Background(), time.UnixMilli(1), 0)
	require.NoError(t, err)
	require.Zero(t, n, "reports outlived their table")
}

// TestReportsGoWithTable: a dropped table's reports go with it (a new
// table of the name starts with none); a soft-dropped table keeps them
// until its retention ends and its purge forgets it, and an undrop
// brings them back.
func TestReportsGoWithTable(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupReports(t, backend, false, time.Hour)
			b.createNamespace(t, "sales")
			require.Equal(t, 200, b.createTable(t, "sales", "t", nil).status)
			commitSnapshots(t, b, "wh", "sales", "t", []int64{fixtureSnapshot})
			require.Equal(t, 204, b.do(t, "POST", "/v1/wh/namespaces/sales/tables/t/metrics", fixtureFor(t, "scan-report.json", "sales", "t")).status)
			require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/sales/tables/t?purgeRequested=true", nil).status)
			noReportRows(t, b)
			require.Equal(t, 200, b.createTable(t, "sales", "t", nil).status)
			require.Empty(t, b.reports(t, "t", "").Reports)

			// Soft warehouses: "brief" ends the retention at once, so its
			// purge job forgets the table and its reports; "slow" keeps the
			// dropped table an hour, with its reports, which an undrop
			// brings back.
			softDrop := func(name, retention string) {
				r := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": name, "location": "file://" + t.TempDir(),
					"properties": map[string]string{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": retention}})
				require.Equal(t, 200, r.status, "%s", r.body)
				require.Equal(t, 200, b.do(t, "POST", "/v1/"+name+"/namespaces", map[string]any{"namespace": []string{"ns"}}).status)
				require.Equal(t, 200, b.do(t, "POST", "/v1/"+name+"/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)}).status)
				commitSnapshots(t, b, name, "ns", "t", []int64{fixtureSnapshot})
				require.Equal(t, 204, b.do(t, "POST", "/v1/"+name+"/namespaces/ns/tables/t/metrics", fixtureFor(t, "commit-report.json", "ns", "t")).status)
				require.Equal(t, 204, b.do(t, "DELETE", "/v1/"+name+"/namespaces/ns/tables/t?purgeRequested=true", nil).status)
			}
			softDrop("brief", "0")
			b.drainJobs(t)
			noReportRows(t, b)

			softDrop("slow", "3600000")
			noReportRows(t, b) // kept, not swept: the table may come back
			var p deletedPage
			require.NoError(t, json.Unmarshal(b.do(t, "GET", "/management/v1/warehouses/slow/deleted", nil).body, &p))
			require.Len(t, p.Deleted, 1)
			require.Equal(t, 200, b.do(t, "POST", "/management/v1/warehouses/slow/deleted/"+p.Deleted[0].ID+"/undrop", map[string]any{}).status)
			r := b.do(t, "GET", "/management/v1/warehouses/slow/namespaces/ns/tables/t/reports", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Contains(t, string(r.body), `"report-type":"commit-report"`, "an undrop brings the reports back")
		})
	}
}

// TestReportsOff: with no retention reports are still checked and
// counted but not stored, and the route says so.
func TestReportsOff(t *testing.T) {
	b := setupReports(t, "sqlite", false, 0)
	b.createNamespace(t, "sales")
	require.Equal(t, 200, b.createTable(t, "sales", "t", nil).status)
	commitSnapshots(t, b, "wh", "sales", "t", []int64{fixtureSnapshot})
	require.Equal(t, 204, b.do(t, "POST", "/v1/wh/namespaces/sales/tables/t/metrics", fixtureFor(t, "scan-report.json", "sales", "t")).status)
	require.Equal(t, 400, b.do(t, "POST", "/v1/wh/namespaces/sales/tables/t/metrics", `{"report-type":"scan-report"}`).status)
	require.Equal(t, 404, b.do(t, "POST", "/v1/wh/namespaces/sales/tables/nope/metrics", reportFixture(t, "scan-report.json")).status)
	r := b.do(t, "GET", "/management/v1/warehouses/wh/namespaces/sales/tables/t/reports", nil)
	require.Equal(t, 404, r.status)
	_, msg := r.errorOf(t)
	require.Contains(t, msg, "--reports-retention 0")
	noReportRows(t, b)
	// The prune handler is there (a replica with reports on may have
	// enqueued the job) and only waits.
	jobs := b.svc.JobHandlers()
	require.Contains(t, jobs, reports.JobPruneReports)
	var snooze *store.JobSnooze
	require.ErrorAs(t, jobs[reports.JobPruneReports](context.Background(), &store.JobInfo{Kind: reports.JobPruneReports}), &snooze)
	require.Empty(t, b.svc.Reports().Jobs(), "nothing enqueued with reports off")
}

// TestReportMetricsMatchesTable: a report must name the path's table
// (any catalog and namespace prefix, the name itself exact) and a
// snapshot in its current metadata, one just committed included; a
// mismatch is a 400 naming the field and nothing is stored, with
// reports kept or not. A snapshot expired before its report came is
// refused.
func TestReportMetricsMatchesTable(t *testing.T) {
	for _, retention := range []time.Duration{time.Hour, 0} {
		t.Run(retention.String(), func(t *testing.T) {
			b := setupReports(t, "sqlite", false, retention)
			b.createNamespace(t, "sales")
			require.Equal(t, 200, b.createTable(t, "sales", "orders", nil).status)
			metrics := "/v1/wh/namespaces/sales/tables/orders/metrics"
			scan := reportFixture(t, "scan-report.json") // lakehold.sales.orders, fixtureSnapshot
			refused := func(body, field string) {
				t.Helper()
				r := b.do(t, "POST", metrics, body)
				require.Equal(t, 400, r.status, "%s", r.body)
				typ, msg := r.errorOf(t)
				require.Equal(t, "BadRequestException", typ)
				require.Contains(t, msg, "field "+field)
			}
			refused(scan, "snapshot-id 7523141588432391877") // no snapshot yet
			refused(strings.Replace(scan, `"snapshot-id": 7523141588432391877`, `"snapshot-id": -1`, 1), "snapshot-id -1")

			// A commit, then its report: the snapshot just committed is there.
			commitSnapshots(t, b, "wh", "sales", "orders", []int64{fixtureSnapshot, 42})
			for _, body := range []string{
				reportFixture(t, "commit-report.json"),
				scan,
				strings.Replace(scan, `"lakehold.sales.orders"`, `"sales.orders"`, 1),
				strings.Replace(scan, `"lakehold.sales.orders"`, `"orders"`, 1),
				strings.Replace(scan, `"snapshot-id": 7523141588432391877`, `"snapshot-id": 42`, 1),
			} {
				r := b.do(t, "POST", metrics, body)
				require.Equal(t, 204, r.status, "%s", r.body)
			}
			refused(strings.Replace(scan, `"snapshot-id": 7523141588432391877`, `"snapshot-id": 43`, 1), "snapshot-id 43")
			refused(strings.Replace(scan, `"lakehold.sales.orders"`, `"lakehold.sales.other"`, 1), "table-name")
			refused(strings.Replace(scan, `"lakehold.sales.orders"`, `"lakehold.sales.Orders"`, 1), "table-name")
			refused(strings.Replace(scan, `"lakehold.sales.orders"`, `"lakehold.salesorders"`, 1), "table-name")

			// Snapshot 42 expires; a late report of it is refused.
			r := b.do(t, "POST", "/v1/wh/namespaces/sales/tables/orders", map[string]any{"requirements": []any{},
				"updates": []any{mainRef(fixtureSnapshot), map[string]any{"action": "remove-snapshots", "snapshot-ids": []int64{42}}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			refused(strings.Replace(scan, `"snapshot-id": 7523141588432391877`, `"snapshot-id": 42`, 1), "snapshot-id 42")
			if retention > 0 {
				require.Len(t, b.reports(t, "orders", "").Reports, 5, "only the matching reports are stored")
			}
		})
	}
}

// TestReportsCappedPerTable: the prune job keeps the newest reports of
// each type up to ReportsPerTable and removes the older ones; until it
// runs a table may hold more.
func TestReportsCappedPerTable(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupReportsWith(t, backend, false, service.Options{ReportsRetention: time.Hour, ReportsPerTable: 2})
			b.createNamespace(t, "sales")
			require.Equal(t, 200, b.createTable(t, "sales", "t", nil).status)
			commitSnapshots(t, b, "wh", "sales", "t", []int64{fixtureSnapshot})
			metrics := "/v1/wh/namespaces/sales/tables/t/metrics"
			for range 4 {
				require.Equal(t, 204, b.do(t, "POST", metrics, fixtureFor(t, "scan-report.json", "sales", "t")).status)
			}
			require.Equal(t, 204, b.do(t, "POST", metrics, fixtureFor(t, "commit-report.json", "sales", "t")).status)
			before := b.reports(t, "t", "?type=scan-report")
			require.Len(t, before.Reports, 4, "over the cap until the prune")
			jobs := b.svc.JobHandlers()
			var snooze *store.JobSnooze
			require.ErrorAs(t, jobs[reports.JobPruneReports](context.Background(), &store.JobInfo{Kind: reports.JobPruneReports}), &snooze)
			after := b.reports(t, "t", "?type=scan-report")
			require.Len(t, after.Reports, 2)
			require.Equal(t, before.Reports[0].ID, after.Reports[0].ID, "the newest are kept")
			require.Equal(t, before.Reports[1].ID, after.Reports[1].ID)
			require.Len(t, b.reports(t, "t", "?type=commit-report").Reports, 1, "the cap is per type")
		})
	}
}
