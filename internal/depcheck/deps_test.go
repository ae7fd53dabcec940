// Package depcheck guards the import direction between the project's
// packages: pure packages stay pure, only the server sees generated code,
// and nothing above the store sees a database driver.
package depcheck

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// deps returns, per package, its transitive dependencies and, under the key
// "direct:"+path, its direct imports.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "github.com/lakehold/catalog/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		m[p.ImportPath] = p.Deps
		m["direct:"+p.ImportPath] = p.Imports
	}
	return m
}

func TestImportDirection(t *testing.T) {
	const mod = "github.com/lakehold/catalog/"
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{mod + "server", []string{"github.com/jackc/pgx", "modernc.org/sqlite", mod + "store/sqlstore"}},
		{mod + "service", []string{mod + "openapi", mod + "server", "github.com/jackc/pgx", mod + "store/sqlstore"}},
		// The HTTP layer's own packages sit below server and never import
		// it: httperr (error bodies) is their leaf, guard (who may call)
		// sits on it, and pipeline (the middleware) on both.
		{mod + "server/httperr", []string{"=" + mod + "server", mod + "server/guard", mod + "server/pipeline",
			mod + "service", mod + "store", mod + "openapi"}},
		{mod + "server/guard", []string{"=" + mod + "server", mod + "server/pipeline", mod + "openapi",
			"github.com/jackc/pgx", "modernc.org/sqlite", mod + "store/sqlstore"}},
		{mod + "server/pipeline", []string{"=" + mod + "server", mod + "openapi",
			"github.com/jackc/pgx", "modernc.org/sqlite", mod + "store/sqlstore", mod + "internal/tracing/otlpexport"}},
		{"direct:" + mod + "server/pipeline", []string{"go.opentelemetry.io/otel/sdk"}},
		// The commit logic is plain Go: no HTTP in its own imports (its
		// storage dependencies may use HTTP underneath).
		{"direct:" + mod + "service", []string{"net/http"}},
		{mod + "store", []string{"github.com/jackc/pgx", "modernc.org/sqlite", "net/http"}},
		// The database seam under sqlstore: drivers, connections,
		// migrations, error classes. It never reaches back up, and the
		// driver and migration libraries are its own, not sqlstore's.
		{mod + "store/sqlstore/sqldb", []string{"=" + mod + "store/sqlstore", mod + "service", mod + "server"}},
		// River under sqlstore: jobs in, job rows out, over sqldb's drivers.
		{mod + "store/sqlstore/jobqueue", []string{"=" + mod + "store/sqlstore", mod + "service", mod + "server"}},
		{"direct:" + mod + "store/sqlstore", []string{"github.com/jackc/pgx", "modernc.org/sqlite",
			"github.com/golang-migrate/migrate", "github.com/riverqueue/river/riverdriver/riverpgxv5",
			"github.com/riverqueue/river/riverdriver/riversqlite"}},
		// Pure packages: values in, values out.
		{"direct:" + mod + "validation", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "v4manifest", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "internal/v4tree", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "internal/parquetstats", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "internal/tablemeta", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "internal/v4export", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		// The fold checks: Arrow records in, typed errors out.
		{"direct:" + mod + "internal/foldcheck", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		// The public Go reader: reading only, on the caller's storage.
		{mod + "clients/go/stitch", []string{mod + "service", mod + "server", mod + "store", mod + "internal/storage"}},
		{"direct:" + mod + "clients/go/stitch", []string{"net/http", "os"}},
		// Its core, which the catalog's own packages import: the server side
		// depends on no client package.
		{mod + "internal/stitch", []string{mod + "service", mod + "server", mod + "store", mod + "internal/storage", mod + "clients"}},
		{"direct:" + mod + "internal/stitch", []string{"net/http", "os"}},
		{mod + "server", []string{mod + "clients"}},
		{mod + "service", []string{mod + "clients"}},
		{mod + "internal/restread", []string{mod + "clients"}},
		{mod + "internal/compact", []string{mod + "clients"}},
		// catalog read's engine is a REST client: nothing of the server side.
		{mod + "internal/restread", []string{mod + "service", mod + "server", mod + "store"}},
		// The REST client both tools speak through, and the import's
		// engine: client side only.
		{mod + "internal/restclient", []string{mod + "service", mod + "server", mod + "store", mod + "internal/storage"}},
		{mod + "internal/catalogimport", []string{mod + "service", mod + "server", mod + "store", mod + "internal/storage"}},
		{"direct:" + mod + "internal/changeevents", []string{"net/http", "os", mod + "service", mod + "server", mod + "internal/storage"}},
		{mod + "internal/eventsink", []string{mod + "service", mod + "server", mod + "store/sqlstore"}},
		{"direct:" + mod + "internal/requirements", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		// A create request's table definition, decoded: pure as well.
		{"direct:" + mod + "internal/createdef", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		// An engine's metrics report, checked: pure as well.
		{"direct:" + mod + "internal/metricsreport", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "internal/scanplan", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		{"direct:" + mod + "credentials", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		// Authentication and credential vending sit below the orchestration
		// package: they take principals (internal/identity), failure kinds
		// (internal/fault) and vendor types (credentials), never service.
		{mod + "internal/authn", []string{mod + "service", mod + "server", mod + "store"}},
		{mod + "credentials/vending", []string{mod + "service", mod + "server", mod + "store"}},
		{mod + "internal/console", []string{mod + "service", mod + "server", mod + "store"}},
		// The rooms of the orchestration sit below it and never reach back
		// up: identifiers and store errors (leaves), then access control, the
		// v4 manifest readers and planning.
		{mod + "service/ident", []string{mod + "service", mod + "server", mod + "store"}},
		{"direct:" + mod + "service/ident", []string{"net/http", "os"}},
		// The location policy: pure functions over the warehouse row given.
		{mod + "service/locations", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx", mod + "internal/storage"}},
		{"direct:" + mod + "service/locations", []string{"net/http", "os"}},
		{mod + "service/storefault", []string{mod + "service", mod + "server"}},
		{mod + "service/access", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx", mod + "internal/storage"}},
		{"direct:" + mod + "service/access", []string{"net/http", "os"}},
		{mod + "service/idempotent", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx", mod + "internal/storage"}},
		{"direct:" + mod + "service/idempotent", []string{"net/http", "os"}},
		// Change events read no storage of their own (tableaccess, below
		// them, opens storage for other rooms).
		{mod + "service/changefeed", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/changefeed", []string{"os", mod + "internal/storage"}},
		// Metrics reports: the checker, the store and tableaccess.
		{mod + "service/reports", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/reports", []string{"net/http", "os", mod + "internal/storage"}},
		{mod + "service/commitengine", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx", mod + "internal/storage"}},
		{"direct:" + mod + "service/commitengine", []string{"net/http", "os"}},
		{"direct:" + mod + "service/tablefiles", []string{"net/http", "os", mod + "store", mod + "service", mod + "server", mod + "internal/storage"}},
		// What every room reaches tables through: the store, storage and
		// the access decisions, never a room or the facade above it.
		{mod + "service/tableaccess", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/tableaccess", []string{"net/http", "os"}},
		// The v4 manifest readers and their caches: storage through the
		// file IO function they are given, no database.
		{mod + "service/v4read", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/v4read", []string{"net/http", "os"}},
		// Scan planning: the readers and tableaccess.
		{mod + "service/planning", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/planning", []string{"net/http", "os"}},
		// Table maintenance (expiry, orphan removal, purge): tableaccess,
		// the readers and the expiry commit it is given.
		{mod + "service/maintenance", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/maintenance", []string{"net/http", "os"}},
		// The v4 commits: the commit engine, the readers and tableaccess.
		{mod + "service/v4commits", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/v4commits", []string{"net/http", "os"}},
		// Storage access (credential vending, remote signing, native-write
		// eligibility): the vendor, the signer and tableaccess.
		{mod + "service/storageaccess", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx", mod + "credentials/vending"}},
		{"direct:" + mod + "service/storageaccess", []string{"net/http", "os", mod + "internal/storage"}},
		// The background work (job handlers, purge, scheduled policies,
		// soft-deleted objects): tableaccess, maintenance and v4commits.
		{mod + "service/upkeep", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/upkeep", []string{"net/http", "os"}},
		// Table commits through the REST route: the commit engine,
		// tableaccess, and the v4 upgrade as the one hook given.
		{mod + "service/tablecommit", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/tablecommit", []string{"net/http", "os"}},
		// The upgrade to v4 and the export of v4 tables: tablecommit,
		// v4commits, planning and storageaccess, imported (rooms_test.go).
		{mod + "service/v4migrate", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/v4migrate", []string{"net/http", "os"}},
		// The warehouse registry: the store, tableaccess and the sealer.
		{mod + "service/warehouses", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/warehouses", []string{"net/http", "os"}},
		// Views: tableaccess, the commit loop and the drop path given.
		{mod + "service/views", []string{"=" + mod + "service", mod + "server", mod + "store/sqlstore",
			"github.com/jackc/pgx"}},
		{"direct:" + mod + "service/views", []string{"net/http", "os"}},
		// Spans, not exporters, below cmd/: the OTLP exporter (and the SDK
		// with its HTTP client) is wired in by cmd/catalog alone.
		// (Cloud storage SDKs pull the OpenTelemetry SDK in underneath, so
		// only direct imports of it are refused.)
		{mod + "store", []string{mod + "internal/tracing/otlpexport"}},
		{mod + "service", []string{mod + "internal/tracing/otlpexport"}},
		{mod + "server", []string{mod + "internal/tracing/otlpexport"}},
		{"direct:" + mod + "store", []string{"go.opentelemetry.io/otel/sdk"}},
		{"direct:" + mod + "service", []string{"go.opentelemetry.io/otel/sdk"}},
		{"direct:" + mod + "server", []string{"go.opentelemetry.io/otel/sdk"}},
	}
	all := deps(t)
	// Leaves every layer imports: they import nothing of the project.
	// openapi/scantasks is the one generated package any layer may import
	// (the wire types of a plan's scan tasks, which the server encodes and
	// REST readers such as internal/restread decode), so it is a leaf too.
	for _, leaf := range []string{mod + "internal/fault", mod + "internal/identity", mod + "internal/dbclock", mod + "openapi/scantasks"} {
		d, ok := all[leaf]
		if !ok {
			t.Fatalf("package %s not found", leaf)
		}
		for _, dep := range d {
			if strings.HasPrefix(dep, mod) {
				t.Errorf("%s is a leaf and must not import %s", leaf, dep)
			}
		}
	}
	for _, r := range rules {
		d, ok := all[r.pkg]
		if !ok {
			t.Fatalf("package %s not found", r.pkg)
		}
		for _, dep := range d {
			for _, f := range r.forbidden {
				// "=pkg" forbids pkg itself but not the packages below it.
				if exact, ok := strings.CutPrefix(f, "="); ok && dep == exact {
					t.Errorf("%s must not import %s", r.pkg, dep)
				}
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s must not import %s", r.pkg, dep)
				}
			}
		}
	}
	// No reaching into other modules' private state: unsafe only where
	// v4manifest aligns its own buffers.
	for p, d := range all {
		if !strings.HasPrefix(p, "direct:"+mod) || p == "direct:"+mod+"v4manifest" {
			continue
		}
		for _, dep := range d {
			if dep == "unsafe" {
				t.Errorf("%s imports unsafe", strings.TrimPrefix(p, "direct:"))
			}
		}
	}
	for p, d := range all {
		if strings.HasPrefix(p, "direct:") || p == mod+"server" || p == mod+"openapi" || strings.HasPrefix(p, mod+"cmd/") {
			continue
		}
		for _, dep := range d {
			// Exactly openapi: its subpackage scantasks is open to all.
			if dep == mod+"openapi" {
				t.Errorf("%s imports the generated openapi package; only server may", p)
			}
		}
	}
}
