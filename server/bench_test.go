package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// benchBackend is the store benchmarks run on: Postgres by default (the
// production store), CATALOG_BENCH_BACKEND=sqlite for the embedded one.
func benchBackend() string {
	if b := os.Getenv("CATALOG_BENCH_BACKEND"); b != "" {
		return b
	}
	return "postgres"
}

// manySnapshotsMetadata writes a table metadata file with n snapshots (the
// manifest lists it names do not exist: loadTable never opens them).
func manySnapshotsMetadata(tb testing.TB, dir string, n int) string {
	tb.Helper()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	loc := "file://" + filepath.Join(dir, "big")
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, loc, nil)
	require.NoError(tb, err)
	bld, err := table.MetadataBuilderFromBase(meta, "")
	require.NoError(tb, err)
	var parent *int64
	for i := 1; i <= n; i++ {
		id := int64(i)
		snap := &table.Snapshot{
			SnapshotID: id, ParentSnapshotID: parent, SequenceNumber: id, TimestampMs: time.Now().UnixMilli() + id,
			ManifestList: fmt.Sprintf("%s/metadata/snap-%d-1-manifest-list.avro", loc, id),
			Summary:      &table.Summary{Operation: table.OpAppend, Properties: map[string]string{"added-data-files": "1", "added-records": "100"}},
			SchemaID:     &sc.ID,
		}
		require.NoError(tb, bld.AddSnapshot(snap))
		parent = &snap.SnapshotID
	}
	require.NoError(tb, bld.SetSnapshotRef("main", int64(n), table.BranchRef))
	big, err := bld.Build()
	require.NoError(tb, err)
	data, err := json.Marshal(big)
	require.NoError(tb, err)
	path := filepath.Join(dir, "big", "metadata", "00000-big.metadata.json")
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, data, 0o644))
	return "file://" + path
}

func benchGet(b *testing.B, bd *bundle, path string, headers ...string) {
	b.Helper()
	req, _ := http.NewRequest("GET", bd.url+path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		resp, err := bd.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 304 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		b.SetBytes(n)
	}
}

// BenchmarkLoadTable measures loadTable end to end over HTTP (loopback):
// a fresh table, a 10k-snapshot table, and the If-None-Match 304 path.
func BenchmarkLoadTable(b *testing.B) {
	bd := setupTB(b, benchBackend(), nil)
	bd.createNamespaceTB(b, "ns")
	r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "small", "schema": rawJSON(testSchema)})
	require.Equal(b, 200, r.status)
	dir := strings.TrimPrefix(bd.warehouse, "file://") // register only inside the warehouse
	metaLoc := manySnapshotsMetadata(b, dir, 10_000)
	r = bd.doTB(b, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "big", "metadata-location": metaLoc})
	require.Equal(b, 200, r.status, "%s", r.body)
	bigTag := r.header.Get("ETag")

	b.Run("small", func(b *testing.B) { benchGet(b, bd, "/v1/wh/namespaces/ns/tables/small") })
	b.Run("10k-snapshots", func(b *testing.B) { benchGet(b, bd, "/v1/wh/namespaces/ns/tables/big") })
	b.Run("10k-snapshots-refs", func(b *testing.B) { benchGet(b, bd, "/v1/wh/namespaces/ns/tables/big?snapshots=refs") })
	b.Run("304", func(b *testing.B) { benchGet(b, bd, "/v1/wh/namespaces/ns/tables/big", "If-None-Match", bigTag) })
}

// BenchmarkCreateTable measures createTable end to end over HTTP: each op
// creates a new table (metadata file written, row inserted).
func BenchmarkCreateTable(b *testing.B) {
	bd := setupTB(b, benchBackend(), nil)
	bd.createNamespaceTB(b, "ns")
	var next atomic.Int64 // names stay unique across the framework's reruns
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": fmt.Sprintf("t%d", next.Add(1)), "schema": rawJSON(testSchema)})
			if r.status != 200 {
				b.Fatalf("create: %d %s", r.status, r.body)
			}
		}
	})
	// 8 clients at once: creates in one warehouse serialise on its
	// location lock, so this shows how much of the serial rate survives.
	b.Run("8-clients", func(b *testing.B) {
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": fmt.Sprintf("t%d", next.Add(1)), "schema": rawJSON(testSchema)})
				if r.status != 200 {
					b.Errorf("create: %d %s", r.status, r.body)
					return
				}
			}
		})
	})
}

// BenchmarkListTables measures one page of listTables over a namespace of
// 100 tables.
func BenchmarkListTables(b *testing.B) {
	bd := setupTB(b, benchBackend(), nil)
	bd.createNamespaceTB(b, "ns")
	for i := 0; i < 100; i++ {
		r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": fmt.Sprintf("t%d", i), "schema": rawJSON(testSchema)})
		require.Equal(b, 200, r.status, "%s", r.body)
	}
	benchGet(b, bd, "/v1/wh/namespaces/ns/tables")
}

// BenchmarkCommit measures set-properties commits: each goroutine on its own
// table (distinct; GOMAXPROCS clients, then 8 and 16), and all goroutines
// on one table (hot; retries and 409s included, 409s counted as a custom
// metric).
func BenchmarkCommit(b *testing.B) {
	bd := setupTB(b, benchBackend(), nil)
	// Keep one keep-alive connection per client, as real clients do.
	bd.client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	bd.createNamespaceTB(b, "ns")
	const tables = 64
	for i := 0; i < tables; i++ {
		r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": fmt.Sprintf("t%d", i), "schema": rawJSON(testSchema)})
		require.Equal(b, 200, r.status)
	}
	run := func(b *testing.B, clients int, pick func(worker int64) string) {
		var worker, conflicts, seq atomic.Int64
		if clients > 0 {
			// RunParallel starts parallelism × GOMAXPROCS goroutines.
			b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
		}
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b)()
		b.RunParallel(func(pb *testing.PB) {
			w := worker.Add(1)
			for pb.Next() {
				body := setProps("k", fmt.Sprint(seq.Add(1)))
				r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables/"+pick(w), body)
				switch r.status {
				case 200:
				case 409:
					conflicts.Add(1)
				default:
					b.Fatalf("status %d: %s", r.status, r.body)
				}
			}
		})
		b.ReportMetric(float64(conflicts.Load())/float64(b.N), "409s/op")
	}
	distinct := func(w int64) string { return fmt.Sprintf("t%d", w%tables) }
	b.Run("distinct-tables", func(b *testing.B) { run(b, 0, distinct) })
	for _, clients := range []int{8, 16} {
		b.Run(fmt.Sprintf("distinct-tables-%d-clients", clients), func(b *testing.B) { run(b, clients, distinct) })
	}
	b.Run("hot-table", func(b *testing.B) { run(b, 0, func(int64) string { return "t0" }) })
	// One client committing to a table with a long history against one with
	// a single snapshot: the commit's cost should not grow with history
	// (issue 12: at most 3x, and at most 10 MB allocated per commit).
	dir := strings.TrimPrefix(bd.warehouse, "file://") // register only inside the warehouse
	for _, n := range []int{1, 10_000} {
		name := fmt.Sprintf("hist%d", n)
		metaLoc := manySnapshotsMetadata(b, filepath.Join(dir, name), n)
		r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": name, "metadata-location": metaLoc})
		require.Equal(b, 200, r.status, "%s", r.body)
		b.Run(fmt.Sprintf("snapshots=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				benchCommit(b, bd, name, setProps("k", fmt.Sprint(i)))
			}
		})
		// An append: add a snapshot and move main to it.
		tableLoc := "file://" + filepath.Join(dir, name, "big")
		last := int64(n) // manySnapshotsMetadata numbers snapshots and sequence numbers 1..n
		b.Run(fmt.Sprintf("append/snapshots=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				id := last + 1
				benchCommit(b, bd, name, map[string]any{"requirements": []any{}, "updates": []any{
					map[string]any{"action": "add-snapshot", "snapshot": map[string]any{
						"snapshot-id": id, "parent-snapshot-id": last, "sequence-number": id, "timestamp-ms": time.Now().UnixMilli(),
						"manifest-list": fmt.Sprintf("%s/metadata/snap-%d.avro", tableLoc, id),
						"summary":       map[string]string{"operation": "append", "added-records": "1"}, "schema-id": 0}},
					map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}}})
				last = id
			}
		})
	}
}

// benchCommit posts one commit and discards the answer without buffering
// it, so that the allocations counted are the server's.
func benchCommit(b *testing.B, bd *bundle, name string, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := bd.client.Post(bd.url+"/v1/wh/namespaces/ns/tables/"+name, "application/json", bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		b.Fatalf("status %d: %s", resp.StatusCode, msg)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
}
