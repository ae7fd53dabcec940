package loadgen

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// catalog starts this project's catalog in-process on SQLite with
// warehouse "wh", as a target for the load generator.
func catalog(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{VerifyMetadataOnLoad: true, Logger: quiet})
	if _, err := svc.CreateWarehouse(ctx, "wh", "file://"+filepath.Join(t.TempDir(), "warehouse"), nil); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestBenchAgainstCatalog sets up and runs every scenario against the real
// catalog: each must succeed without errors, and the big table must hold
// the snapshots the batches added.
func TestBenchAgainstCatalog(t *testing.T) {
	ctx := context.Background()
	tg, err := ParseTarget("ours=" + catalog(t) + ",warehouse=wh")
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Connect(ctx, 2, false); err != nil {
		t.Fatal(err)
	}
	if err := tg.Setup(ctx, SetupOptions{Namespace: "ns", Snapshots: 23, Batch: 5, ListTables: 3, Writers: 2}); err != nil {
		t.Fatal(err)
	}
	var big struct {
		Metadata struct {
			Snapshots []json.RawMessage `json:"snapshots"`
			Current   int               `json:"current-snapshot-id"`
		} `json:"metadata"`
	}
	if _, err := tg.call(ctx, http.MethodGet, "namespaces/ns/tables/big", nil, nil, &big, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if len(big.Metadata.Snapshots) != 23 || big.Metadata.Current != 23 {
		t.Errorf("big: %d snapshots, current %d; want 23, 23", len(big.Metadata.Snapshots), big.Metadata.Current)
	}
	rs := Bench(ctx, Config{Targets: []*Target{tg}, Scenarios: Scenarios(), Clients: []int{2},
		Duration: 40 * time.Millisecond, Rounds: 2})
	if len(rs) != len(Scenarios()) {
		t.Fatalf("%d results, want one per scenario", len(rs))
	}
	for _, r := range rs {
		s, ok := r.Samples["ours"]
		if !ok {
			t.Errorf("%s: not run (%s)", r.Scenario.Name, r.NA["ours"])
			continue
		}
		if s.Ops == 0 || s.Errors != 0 {
			t.Errorf("%s: %d ops, %d errors (first: %s)", r.Scenario.Name, s.Ops, s.Errors, s.First)
		}
	}
}

// TestRevalidationProbe: a server that ignores If-None-Match gets "n/a"
// for the 304 scenario instead of a rate of full loads.
func TestRevalidationProbe(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"x"`)
		w.Write([]byte(`{}`))
	}))
	defer hs.Close()
	tg := &Target{Name: "fake", URI: hs.URL, fx: fixtures{ns: "ns", na: map[string]string{}}}
	if err := tg.Connect(context.Background(), 1, false); err != nil {
		t.Fatal(err)
	}
	if err := tg.probeRevalidation(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tg.fx.na[ScenarioLoad304] == "" {
		t.Error("304 scenario still applies to a server that never answers 304")
	}
}

// TestBenchCPUAgainstCatalog runs the CPU phase against the in-process
// catalog (its process is this test's): every scenario sends exactly its
// count each round without errors, and the CPU read is more than nothing.
func TestBenchCPUAgainstCatalog(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	ctx := context.Background()
	tg, err := ParseTarget("ours=" + catalog(t) + ",warehouse=wh,cpu=" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Connect(ctx, 2, false); err != nil {
		t.Fatal(err)
	}
	if err := tg.Setup(ctx, SetupOptions{Namespace: "ns", Snapshots: 12, Batch: 5, ListTables: 3, Writers: 2}); err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{ScenarioLoadSmall: 40, ScenarioCommitDistinct: 30, ScenarioCreate: 20}
	rs := BenchCPU(ctx, CPUConfig{Targets: []*Target{tg}, Scenarios: Scenarios(), Ops: ops, Clients: 2, Rounds: 2, ProcRoot: "/proc"})
	if len(rs) != len(ops) {
		t.Fatalf("%d results, want one per scenario given a count", len(rs))
	}
	var cpu time.Duration
	for _, r := range rs {
		runs := r.Runs["ours"]
		if len(runs) != 2 {
			t.Errorf("%s: %d runs, want 2", r.Scenario.Name, len(runs))
		}
		for _, run := range runs {
			if run.Ops != ops[r.Scenario.Name] || run.Errors != 0 {
				t.Errorf("%s: %d ops, %d errors (first: %s); want %d, 0", r.Scenario.Name, run.Ops, run.Errors, run.First, ops[r.Scenario.Name])
			}
			cpu += run.CPU
		}
	}
	if cpu <= 0 {
		t.Error("no CPU time read for 180 operations")
	}
}
