package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/store/sqlstore"
)

const (
	benchUpgradeFiles     = 100_000
	benchUpgradeManifests = 10
)

// writeV3Snapshot writes, cheaply, the Avro manifests and manifest list of
// a v3 snapshot of files data files (metadata only: no data file exists;
// the upgrade never reads them) into the table at loc, and returns the
// add-snapshot and set-snapshot-ref updates that commit it.
func writeV3Snapshot(tb testing.TB, loc string, files, manifests int, snapID int64) json.RawMessage {
	tb.Helper()
	dir := strings.TrimPrefix(loc, "file://") + "/metadata"
	require.NoError(tb, os.MkdirAll(dir, 0o755))
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	var mfs []iceberg.ManifestFile
	per := files / manifests
	for m := 0; m < manifests; m++ {
		entries := make([]iceberg.ManifestEntry, 0, per)
		for i := m * per; i < (m+1)*per; i++ {
			region := fmt.Sprintf("r%02d", i*100/files)
			b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, fmt.Sprintf("%s/data/f%06d.parquet", loc, i),
				iceberg.ParquetFile, map[int]any{1000: region}, nil, nil, 1000, 1<<20)
			require.NoError(tb, err)
			lo, hi := make([]byte, 8), make([]byte, 8)
			for k := 0; k < 8; k++ {
				lo[k], hi[k] = byte(int64(i)*1000>>(8*k)), byte((int64(i)*1000+999)>>(8*k))
			}
			b.ValueCounts(map[int]int64{1: 1000, 2: 1000}).NullValueCounts(map[int]int64{1: 0, 2: 0}).
				LowerBoundValues(map[int][]byte{1: lo, 2: []byte(region)}).UpperBoundValues(map[int][]byte{1: hi, 2: []byte(region)})
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapID, nil, nil, b.Build()))
		}
		var buf bytes.Buffer
		name := fmt.Sprintf("%s/metadata/m%d-%d.avro", loc, snapID, m)
		mf, err := iceberg.WriteManifest(name, &buf, 3, spec, sc, snapID, entries)
		require.NoError(tb, err)
		require.NoError(tb, os.WriteFile(strings.TrimPrefix(name, "file://"), buf.Bytes(), 0o644))
		mfs = append(mfs, mf)
	}
	var buf bytes.Buffer
	seq := int64(1)
	require.NoError(tb, iceberg.WriteManifestList(3, &buf, snapID, nil, &seq, 0, mfs))
	list := fmt.Sprintf("%s/metadata/snap-%d.avro", loc, snapID)
	require.NoError(tb, os.WriteFile(strings.TrimPrefix(list, "file://"), buf.Bytes(), 0o644))
	ups, err := json.Marshal([]any{
		map[string]any{"action": "add-snapshot", "snapshot": map[string]any{"snapshot-id": snapID, "sequence-number": seq,
			"timestamp-ms": time.Now().UnixMilli(), "manifest-list": list, "summary": map[string]string{"operation": "append"},
			"schema-id": 0, "first-row-id": 0, "added-rows": int64(files) * 1000}},
		map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapID},
	})
	require.NoError(tb, err)
	return ups
}

// newUpgradeBench creates a v3 table with one snapshot of files files, on
// a store of backend (sqlite or postgres); maxLeaf bounds the converted
// leaves (0: the default). The bound is fixed when the service is built.
func newUpgradeBench(tb testing.TB, backend string, files, manifests, maxLeaf int) (*Service, Ident, int64) {
	tb.Helper()
	ctx := context.Background()
	var st *sqlstore.Store
	var err error
	if backend == "sqlite" {
		st, err = sqlstore.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "c.db"))
	} else {
		st, err = sqlstore.OpenPostgres(ctx, pgtest.NewDatabase(tb), true)
	}
	require.NoError(tb, err)
	tb.Cleanup(st.Close)
	svc := New(st, storage.NewProvider(), Options{MaxLeafEntries: maxLeaf, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+tb.TempDir(), nil)
	require.NoError(tb, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(tb, err)
	res, err := svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, CreateTableInput{
		Name: "big", Properties: map[string]string{"format-version": "3"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},` +
			`{"id":2,"name":"region","type":"string","required":false}]}`),
		Spec: []byte(`{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"region","transform":"identity"}]}`),
	})
	require.NoError(tb, err)
	var md struct {
		Location string `json:"location"`
	}
	require.NoError(tb, json.Unmarshal(res.Metadata, &md))
	id := Ident{Namespace: []string{"ns"}, Name: "big"}
	const snapID = 77
	_, err = svc.CommitTable(ctx, "wh", TableChange{Ident: id, Requirements: json.RawMessage(`[]`),
		Updates: writeV3Snapshot(tb, md.Location, files, manifests, snapID)})
	require.NoError(tb, err)
	return svc, id, snapID
}

var upgradeUpdate = json.RawMessage(`[{"action":"upgrade-format-version","format-version":4}]`)

// TestUpgradeManyManifests upgrades a table of several Avro manifests
// (the benchmark's shape, small) and checks the converted tree's totals.
func TestUpgradeManyManifests(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testUpgradeManyManifests(t, backend) })
	}
}

func testUpgradeManyManifests(t *testing.T, backend string) {
	svc, id, snapID := newUpgradeBench(t, backend, 2_000, 4, 300)
	ctx := context.Background()
	res, err := svc.CommitTable(ctx, "wh", TableChange{Ident: id, Requirements: json.RawMessage(`[]`), Updates: upgradeUpdate})
	require.NoError(t, err)
	md, version, err := tablemeta.Parse(res.Metadata)
	require.NoError(t, err)
	require.Equal(t, FormatV4, version)
	cur := md.CurrentSnapshot()
	require.Equal(t, fmt.Sprint(snapID), cur.Summary.Properties["v4-conversion-of-snapshot-id"])
	require.Equal(t, "2000", cur.Summary.Properties["total-data-files"])
	require.Equal(t, "2000000", cur.Summary.Properties["total-records"])
	w, err := svc.ta.Warehouse(ctx, "wh")
	require.NoError(t, err)
	st, err := svc.v4.Load(ctx, w, id)
	require.NoError(t, err)
	require.Len(t, st.RootRows(), 7, "2000 rows in leaves of at most 300")
	var rows int64
	for _, rr := range st.RootRows() {
		rows += rr.RecordCount
		require.Equal(t, int32(rr.RecordCount), rr.ManifestInfo.ExistingFiles)
	}
	require.Equal(t, int64(2000), rows)
	plan, err := svc.Planner().PlanScan(ctx, "wh", id, PlanRequest{Filter: json.RawMessage(`{"type":"eq","term":"region","value":"r42"}`), CaseSensitive: true})
	require.NoError(t, err)
	require.Len(t, plan.Tasks, 20, "partition values carried: 1% of the files")
}

// BenchmarkUpgrade converts a 100k-entry v3 snapshot (10 Avro manifests)
// to v4: one commit reading the manifests, writing the leaves and root and
// swapping. Each further iteration first rolls main back to the Avro
// snapshot, so that the same entries are converted again. Reports
// entries/s.
func BenchmarkUpgrade(b *testing.B) {
	svc, id, snapID := newUpgradeBench(b, "sqlite", benchUpgradeFiles, benchUpgradeManifests, 0)
	ctx := context.Background()
	rollback := json.RawMessage(fmt.Sprintf(`[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%d}]`, snapID))
	var spent time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 {
			b.StopTimer()
			_, err := svc.CommitTable(ctx, "wh", TableChange{Ident: id, Requirements: json.RawMessage(`[]`), Updates: rollback})
			require.NoError(b, err)
			b.StartTimer()
		}
		start := time.Now()
		_, err := svc.CommitTable(ctx, "wh", TableChange{Ident: id, Requirements: json.RawMessage(`[]`), Updates: upgradeUpdate})
		require.NoError(b, err)
		spent += time.Since(start)
	}
	b.ReportMetric(float64(benchUpgradeFiles)*float64(b.N)/spent.Seconds(), "entries/s")
}
