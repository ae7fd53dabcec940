package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// importLakehold is an in-process Lakehold on SQLite, or on a fresh
// Postgres database when pg is set, serving one warehouse.
type importLakehold struct {
	url, warehouse, dir string
}

// newImportLakehold serves warehouse wh at dir/wh, with allowed-locations
// when allowed is not empty.
func newImportLakehold(t *testing.T, pg bool, wh, allowed string) *importLakehold {
	t.Helper()
	ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})
	dir := t.TempDir()
	var st *sqlstore.Store
	var err error
	if pg {
		st, err = sqlstore.OpenPostgres(ctx, pgtest.NewDatabase(t), true)
	} else {
		st, err = sqlstore.OpenSQLite(ctx, filepath.Join(dir, "catalog.db"))
	}
	require.NoError(t, err)
	t.Cleanup(st.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet})
	var props map[string]string
	if allowed != "" {
		props = map[string]string{"allowed-locations": allowed}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "wh"), 0o755))
	_, err = svc.CreateWarehouse(ctx, wh, "file://"+filepath.Join(dir, "wh"), props)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: wh, Logger: quiet}))
	t.Cleanup(hs.Close)
	return &importLakehold{url: hs.URL, warehouse: wh, dir: filepath.Join(dir, "wh")}
}

// startRESTFixture starts the Iceberg Java REST fixture (RESTCatalogServer,
// JDBC catalog on SQLite) with its warehouse under a temporary directory.
// It skips when java or the fixture's jars (scripts/rest-fixture.sh
// fetches them) are missing, and fails instead under
// CATALOG_TEST_REQUIRE_FIXTURE=1, as scripts/test.sh sets after fetching.
func startRESTFixture(t *testing.T) (uri, warehouseDir string) {
	t.Helper()
	home, _ := os.UserHomeDir()
	lib := filepath.Join(home, ".cache", "lakehold", "rest-fixture-1.11.0")
	if c := os.Getenv("LAKEHOLD_CACHE"); c != "" {
		lib = filepath.Join(c, "rest-fixture-1.11.0")
	}
	missing := t.Skipf
	if os.Getenv("CATALOG_TEST_REQUIRE_FIXTURE") == "1" {
		missing = t.Fatalf
	}
	if _, err := os.Stat(filepath.Join(lib, ".complete")); err != nil {
		missing("the Iceberg REST fixture's jars are not under %s (scripts/rest-fixture.sh fetches them)", lib)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		missing("no java for the Iceberg REST fixture")
	}
	dir := t.TempDir()
	warehouseDir = filepath.Join(dir, "warehouse")
	require.NoError(t, os.MkdirAll(warehouseDir, 0o755))
	port := freePort(t)
	cmd := exec.Command(java, "-cp", lib+"/*", "org.apache.iceberg.rest.RESTCatalogServer")
	// The fixture takes its catalog properties from CATALOG_* variables
	// only: a clean environment keeps ours out of it.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"CATALOG_URI=jdbc:sqlite:file:" + filepath.Join(dir, "catalog.db"),
		"CATALOG_WAREHOUSE=file://" + warehouseDir, fmt.Sprintf("CATALOG_REST_PORT=%d", port)}
	var logb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logb, &logb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	uri = fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; i < 240; i++ {
		if resp, err := http.Get(uri + "/v1/config"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return uri, warehouseDir
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the REST fixture did not start:\n%s", logb.String())
	return "", ""
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// restCall sends one JSON request to a REST catalog under its prefix
// (read from /v1/config for warehouse), a \x1f in path replaced by the
// catalog's namespace separator, and fails the test unless it answers 2xx.
func restCall(t *testing.T, uri, warehouse, method, path string, body any) json.RawMessage {
	t.Helper()
	var cfg struct {
		Overrides map[string]string `json:"overrides"`
		Defaults  map[string]string `json:"defaults"`
	}
	resp, err := http.Get(uri + "/v1/config?warehouse=" + warehouse)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&cfg))
	resp.Body.Close()
	prefix := cfg.Overrides["prefix"]
	if prefix == "" {
		prefix = cfg.Defaults["prefix"]
	}
	sep := cfg.Overrides["namespace-separator"]
	if sep == "" {
		sep = "%1F"
	}
	path = strings.ReplaceAll(path, "\x1f", sep)
	base := uri + "/v1"
	if prefix != "" {
		base += "/" + prefix
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(method, base+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	require.Equal(t, 2, resp.StatusCode/100, "%s %s: %s", method, path, out)
	return out
}

// importSource is a catalog seeded for an import test.
type importSource struct {
	uri, warehouse string
	credential     string // sent as --source-credential when set
	// java: the Java fixture, which lets two tables share a location and
	// writes gzipped view metadata by default; the source gets both.
	java bool
}

// seedSource creates, through the REST API (iceberg-go for tables, plain
// requests for nested namespaces and views):
//
//	sales {owner: alice}, sales.eu, ops
//	sales.orders      3 rows appended (a real snapshot)
//	sales.eu.daily    no snapshot
//	ops.elsewhere     at outside/elsewhere, outside the target's rules
//	ops.a1, ops.a2    one location (only when src.java)
//	sales.v_orders    a spark view
//	sales.v_odd       a view in dialect "cobol"
//	sales.v_gz        a view with gzipped metadata (only when src.java)
func seedSource(t *testing.T, src importSource, outside string) {
	t.Helper()
	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "src", src.uri, rest.WithWarehouseLocation(src.warehouse))
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, iceberg.Properties{"owner": "alice", "comment": "orders and returns"}))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"ops"}, nil))
	restCall(t, src.uri, src.warehouse, http.MethodPost, "/namespaces", map[string]any{"namespace": []string{"sales", "eu"}, "properties": map[string]string{"region": "eu"}})

	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "item", Type: iceberg.PrimitiveTypes.String})
	orders, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, sc)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(orders.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"apple", "pear", "fig"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	_, err = orders.AppendTable(ctx, array.NewTableFromRecords(asc, []arrow.RecordBatch{rec}), 10, nil)
	require.NoError(t, err)

	restCall(t, src.uri, src.warehouse, http.MethodPost, "/namespaces/sales\x1feu/tables", map[string]any{"name": "daily", "schema": schemaJSON})
	_, err = cat.CreateTable(ctx, table.Identifier{"ops", "elsewhere"}, sc, catalog.WithLocation("file://"+filepath.Join(outside, "elsewhere")))
	require.NoError(t, err)
	if src.java {
		for _, n := range []string{"a1", "a2"} {
			_, err = cat.CreateTable(ctx, table.Identifier{"ops", n}, sc, catalog.WithLocation("file://"+filepath.Join(outside, "..", "shared")))
			require.NoError(t, err)
		}
	}
	views := map[string]string{"v_orders": "spark", "v_odd": "cobol"}
	if src.java {
		views["v_gz"] = "spark"
	}
	for name, dialect := range views {
		// The Java catalog writes gzipped view metadata unless told.
		props := map[string]string{"write.metadata.compression-codec": "none"}
		if name == "v_gz" {
			props = map[string]string{}
		}
		restCall(t, src.uri, src.warehouse, http.MethodPost, "/namespaces/sales/views", map[string]any{
			"name": name, "schema": schemaJSON, "properties": props,
			"view-version": map[string]any{"version-id": 1, "timestamp-ms": time.Now().UnixMilli(), "schema-id": 0, "summary": map[string]string{},
				"default-namespace": []string{"sales"},
				"representations":   []map[string]string{{"type": "sql", "sql": "SELECT id, item FROM sales.orders", "dialect": dialect}}},
		})
	}
}

var schemaJSON = json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"item","type":"string","required":false}]}`)

// runImport runs `catalog import --json` from src into dst and returns
// the report and the command's error.
func runImport(t *testing.T, src importSource, dst *importLakehold, extra ...string) (*catalogimport.Report, string, error) {
	t.Helper()
	args := []string{"import", "--json", "--source-uri", src.uri, "--uri", dst.url, "--warehouse", dst.warehouse}
	if src.warehouse != "" {
		args = append(args, "--source-warehouse", src.warehouse)
	}
	if src.credential != "" {
		args = append(args, "--source-credential", src.credential)
	}
	var out, errb bytes.Buffer
	err := run(append(args, extra...), &out, &errb)
	var rep catalogimport.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), "stdout: %s\nstderr: %s", out.String(), errb.String())
	return &rep, errb.String(), err
}

// statuses maps each item's full name (prefixed by its kind) to its status.
func statuses(rep *catalogimport.Report) map[string]catalogimport.Status {
	m := map[string]catalogimport.Status{}
	for _, it := range rep.Items {
		m[string(it.Kind)+" "+it.FullName()] = it.Status
	}
	return m
}

func reasonOf(rep *catalogimport.Report, kind catalogimport.Kind, name string) string {
	for _, it := range rep.Items {
		if it.Kind == kind && it.FullName() == name {
			return it.Reason
		}
	}
	return ""
}

// loadTableMeta loads a table through the REST API (iceberg-go).
func loadTableMeta(t *testing.T, uri, warehouse string, id table.Identifier) *table.Table {
	t.Helper()
	cat, err := rest.NewCatalog(context.Background(), "x", uri, rest.WithWarehouseLocation(warehouse))
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), id)
	require.NoError(t, err)
	return tbl
}

// targetHas reports whether the target serves ns.name as a table (or a
// view when view is set).
func targetHas(t *testing.T, dst *importLakehold, ns []string, name string, view bool) bool {
	t.Helper()
	tgt, err := catalogimport.OpenTarget(context.Background(), catalogimport.Endpoint{URI: dst.url, Warehouse: dst.warehouse})
	require.NoError(t, err)
	lookup := tgt.TableLocation
	if view {
		lookup = tgt.ViewLocation
	}
	_, ok, err := lookup(context.Background(), ns, name)
	require.NoError(t, err)
	return ok
}

// checkImport runs the whole story against one source: dry run, import,
// what the target then serves, and a rerun.
func checkImport(t *testing.T, src importSource, dst *importLakehold) {
	// Dry run: everything would be imported but the refusals found in the
	// source itself and the locations outside the target warehouse;
	// nothing is written.
	rep, _, err := runImport(t, src, dst, "--dry-run")
	require.Error(t, err, "a refused item makes the exit status 1")
	require.True(t, rep.DryRun)
	st := statuses(rep)
	require.Equal(t, catalogimport.WouldImport, st["namespace sales"])
	require.Equal(t, catalogimport.WouldImport, st["namespace sales.eu"])
	require.Equal(t, catalogimport.WouldImport, st["table sales.orders"])
	require.Equal(t, catalogimport.Refused, st["view sales.v_odd"])
	require.Contains(t, reasonOf(rep, catalogimport.KindView, "sales.v_odd"), `unknown SQL dialect "cobol"`)
	require.Equal(t, catalogimport.Refused, st["table ops.elsewhere"], "a dry run foresees a location outside the warehouse")
	require.Contains(t, reasonOf(rep, catalogimport.KindTable, "ops.elsewhere"), "outside the target warehouse's location and allowed-locations")
	require.Contains(t, rep.Note, "metadata locations checked")
	src0, err := catalogimport.OpenSource(context.Background(), catalogimport.Endpoint{URI: dst.url, Warehouse: dst.warehouse})
	require.NoError(t, err)
	nss, err := src0.Namespaces(context.Background(), nil, -1)
	require.NoError(t, err)
	require.Empty(t, nss, "a dry run creates nothing")

	// The import.
	rep, stderr, err := runImport(t, src, dst)
	require.Error(t, err)
	require.Contains(t, stderr, "table sales.orders: imported", "a progress line per item")
	st = statuses(rep)
	for _, name := range []string{"namespace sales", "namespace sales.eu", "namespace ops", "table sales.orders", "table sales.eu.daily", "view sales.v_orders"} {
		require.Equal(t, catalogimport.Imported, st[name], name)
	}
	require.Equal(t, catalogimport.Refused, st["table ops.elsewhere"])
	require.Contains(t, reasonOf(rep, catalogimport.KindTable, "ops.elsewhere"), "the target refused it")
	require.Contains(t, reasonOf(rep, catalogimport.KindTable, "ops.elsewhere"), "inside the warehouse")
	require.Equal(t, catalogimport.Refused, st["view sales.v_odd"])
	wantRefused, wantViews := 2, 1
	if src.java {
		wantRefused, wantViews = 4, 2
		require.Equal(t, catalogimport.Imported, st["view sales.v_gz"], "gzip-compressed metadata is read")
		require.True(t, targetHas(t, dst, []string{"sales"}, "v_gz", true))
		for _, n := range []string{"ops.a1", "ops.a2"} {
			require.Equal(t, catalogimport.Refused, st["table "+n])
			require.Contains(t, reasonOf(rep, catalogimport.KindTable, n), "overlaps")
			require.False(t, targetHas(t, dst, []string{"ops"}, strings.TrimPrefix(n, "ops."), false))
		}
	}
	require.Len(t, rep.Refused(), wantRefused)
	require.Equal(t, 3, rep.Count(catalogimport.KindNamespace, catalogimport.Imported))
	require.Equal(t, 2, rep.Count(catalogimport.KindTable, catalogimport.Imported))
	require.Equal(t, wantViews, rep.Count(catalogimport.KindView, catalogimport.Imported))
	// Nothing of a refused item is in the target.
	require.False(t, targetHas(t, dst, []string{"ops"}, "elsewhere", false))
	require.False(t, targetHas(t, dst, []string{"sales"}, "v_odd", true))
	require.True(t, targetHas(t, dst, []string{"sales"}, "v_orders", true))

	checkImported(t, src, dst)

	// A rerun skips everything there and refuses the same items again.
	rep, _, err = runImport(t, src, dst)
	require.Error(t, err)
	require.Zero(t, rep.Count(catalogimport.KindNamespace, catalogimport.Imported)+
		rep.Count(catalogimport.KindTable, catalogimport.Imported)+rep.Count(catalogimport.KindView, catalogimport.Imported))
	require.Equal(t, 3, rep.Count(catalogimport.KindNamespace, catalogimport.Skipped))
	require.Equal(t, 2, rep.Count(catalogimport.KindTable, catalogimport.Skipped))
	require.Equal(t, wantViews, rep.Count(catalogimport.KindView, catalogimport.Skipped))
	require.Len(t, rep.Refused(), wantRefused)
	require.Contains(t, reasonOf(rep, catalogimport.KindTable, "sales.orders"), "same metadata location")
}

// checkImported compares what the target serves with the source:
// namespace properties, the table's metadata location, current snapshot,
// schema and rows.
func checkImported(t *testing.T, src importSource, dst *importLakehold) {
	ctx := context.Background()
	tgtCat, err := rest.NewCatalog(ctx, "dst", dst.url, rest.WithWarehouseLocation(dst.warehouse))
	require.NoError(t, err)
	props, err := tgtCat.LoadNamespaceProperties(ctx, table.Identifier{"sales"})
	require.NoError(t, err)
	require.Equal(t, "alice", props["owner"])
	require.Equal(t, "orders and returns", props["comment"])

	id := table.Identifier{"sales", "orders"}
	want := loadTableMeta(t, src.uri, src.warehouse, id)
	got := loadTableMeta(t, dst.url, dst.warehouse, id)
	canon := func(s string) string { n, err := storagepath.Normalize(s); require.NoError(t, err); return n }
	require.Equal(t, canon(want.MetadataLocation()), canon(got.MetadataLocation()), "the source's metadata file is kept")
	require.NotNil(t, want.CurrentSnapshot())
	require.Equal(t, want.CurrentSnapshot().SnapshotID, got.CurrentSnapshot().SnapshotID)
	require.Equal(t, want.Metadata().TableUUID(), got.Metadata().TableUUID())
	require.True(t, want.Schema().Equals(got.Schema()), "schema: %s vs %s", want.Schema(), got.Schema())
	require.Equal(t, len(want.Metadata().Snapshots()), len(got.Metadata().Snapshots()))

	rows := func(tbl *table.Table) []string {
		at, err := tbl.Scan().ToArrowTable(ctx)
		require.NoError(t, err)
		defer at.Release()
		var out []string
		tr := array.NewTableReader(at, -1)
		defer tr.Release()
		for tr.Next() {
			rec := tr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				out = append(out, fmt.Sprintf("%d=%s", rec.Column(0).(*array.Int64).Value(i), rec.Column(1).(*array.String).Value(i)))
			}
		}
		return out
	}
	wantRows := rows(want)
	require.Len(t, wantRows, 3)
	require.ElementsMatch(t, wantRows, rows(got), "the imported table reads the source's rows")
}

// TestImportFromRESTFixture imports from the Iceberg Java REST fixture
// (signing in with client credentials) into Lakehold on SQLite and on
// Postgres.
func TestImportFromRESTFixture(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			if pg && os.Getenv("CATALOG_TEST_DATABASE_URL") == "" {
				t.Skip("Postgres tests need CATALOG_TEST_DATABASE_URL")
			}
			uri, whDir := startRESTFixture(t)
			outside := filepath.Join(t.TempDir(), "outside")
			src := importSource{uri: uri, credential: "importer:secret", java: true}
			seedSource(t, src, outside)
			dst := newImportLakehold(t, pg, "lake", "file://"+whDir)
			checkImport(t, src, dst)
		})
	}
}

// TestImportFromLakehold imports from a second Lakehold into one on
// SQLite and on Postgres.
func TestImportFromLakehold(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			if pg && os.Getenv("CATALOG_TEST_DATABASE_URL") == "" {
				t.Skip("Postgres tests need CATALOG_TEST_DATABASE_URL")
			}
			outside := filepath.Join(t.TempDir(), "outside")
			srcLH := newImportLakehold(t, false, "old", "file://"+outside)
			src := importSource{uri: srcLH.url, warehouse: "old"}
			seedSource(t, src, outside)
			dst := newImportLakehold(t, pg, "lake", "file://"+srcLH.dir)
			checkImport(t, src, dst)
		})
	}
}

// TestImportUsage: a missing source or two ways to sign in to one side
// are usage errors (exit status 2) that name the flag; an unreachable
// source is a failure (1) naming it.
func TestImportUsage(t *testing.T) {
	for args, want := range map[string]string{
		"import": "--source-uri is required",
		"import --source-uri http://x --source-credential a:b --source-token t": "--source-credential or --source-token",
		"import --source-uri http://x --credential a:b --token t":               "--credential or --token",
	} {
		err := run(strings.Fields(args), io.Discard, io.Discard)
		require.Error(t, err, args)
		require.Equal(t, 2, exitCode(err), args)
		require.Contains(t, err.Error(), want, args)
	}
	err := run([]string{"import", "--source-uri", "http://127.0.0.1:1", "--uri", "http://127.0.0.1:1"}, io.Discard, io.Discard)
	require.Error(t, err)
	require.Equal(t, 1, exitCode(err))
	require.Contains(t, err.Error(), "source http://127.0.0.1:1")
}
