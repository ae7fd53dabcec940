package service_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// gatedStore holds the first ObjectsSwap until released, so that a second
// commit can land in between: a deterministic lost race.
type gatedStore struct {
	store.Store
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func (g *gatedStore) ObjectsSwap(ctx context.Context, swaps []store.Swap) error {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.reached)
		<-g.release
	}
	return g.Store.ObjectsSwap(ctx, swaps)
}

func md(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(id)})
}

func writeFile(t *testing.T, path string, fields []arrow.Field, n int) int64 {
	t.Helper()
	return parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		for i := 0; i < n; i++ {
			for j, f := range fields {
				switch f.Type.ID() {
				case arrow.INT64:
					b.Field(j).(*array.Int64Builder).Append(int64(i))
				case arrow.FLOAT64:
					b.Field(j).(*array.Float64Builder).Append(float64(i))
				}
			}
		}
	})
}

type fixture struct {
	svc  *service.Service
	gate *gatedStore
	loc  string
	dir  string
	id   service.Ident
}

func newFixture(t *testing.T, backend string) *fixture {
	ctx := context.Background()
	gate := &gatedStore{Store: openStore(t, backend), reached: make(chan struct{}), release: make(chan struct{})}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(gate, storage.NewProvider(), service.Options{Logger: quiet})
	_, err := svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	res, err := svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
		Name: "t", Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"score","type":"double","required":false},{"id":3,"name":"rank","type":"double","required":false}]}`),
	})
	require.NoError(t, err)
	var meta struct {
		Location string `json:"location"`
	}
	require.NoError(t, jsonUnmarshal(res.Metadata, &meta))
	fx := &fixture{svc: svc, gate: gate, loc: meta.Location, dir: strings.TrimPrefix(meta.Location, "file://"), id: service.Ident{Namespace: []string{"ns"}, Name: "t"}}
	var adds []service.DataFileInput
	for _, name := range []string{"a", "b"} {
		size := writeFile(t, filepath.Join(fx.dir, "data", name+".parquet"), []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md(1)},
			{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(2)},
			{Name: "rank", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(3)}}, 4)
		adds = append(adds, service.DataFileInput{Location: "data/" + name + ".parquet", FileFormat: "parquet", RecordCount: 4, FileSizeInBytes: size})
	}
	// Let the setup commit through the gate.
	close(gate.release)
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: adds})
	require.NoError(t, err)
	<-gate.reached
	gate.once = sync.Once{}
	gate.reached, gate.release = make(chan struct{}), make(chan struct{})
	return fx
}

func (fx *fixture) columnCommit(t *testing.T, base, name string) service.ColumnFilesCommit {
	size := writeFile(t, filepath.Join(fx.dir, "data", name), []arrow.Field{
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(2)}}, 4)
	return service.ColumnFilesCommit{Ident: fx.id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: "data/" + base, Location: "data/" + name, FileFormat: "parquet", FieldIDs: []int{2}, FileSizeInBytes: size, RecordCount: 4}}}
}

// race runs commit A until it is about to swap, lands commit B, then lets
// A swap (and lose) and returns A's error.
func (fx *fixture) race(t *testing.T, a, b service.ColumnFilesCommit) error {
	ctx := context.Background()
	errA := make(chan error, 1)
	go func() {
		_, err := fx.svc.CommitColumnFiles(ctx, "wh", a)
		errA <- err
	}()
	<-fx.gate.reached
	_, err := fx.svc.CommitColumnFiles(ctx, "wh", b)
	require.NoError(t, err, "the second commit lands while the first waits")
	close(fx.gate.release)
	return <-errA
}

var backends = []string{"sqlite", "postgres"}

func TestConcurrentColumnCommitsOnDisjointBasesBothLand(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newFixture(t, backend)
			err := fx.race(t, fx.columnCommit(t, "a.parquet", "cfa.parquet"), fx.columnCommit(t, "b.parquet", "cfb.parquet"))
			require.NoError(t, err, "the loser is re-based onto the winner")
			rows, err := fx.svc.V4Commits().LiveColumnFiles(context.Background(), "wh", fx.id, nil)
			require.NoError(t, err)
			require.Len(t, rows, 2, "both updates are visible")
		})
	}
}

func TestConcurrentColumnCommitsOnSameBaseConflict(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testSameBaseConflict(t, backend) })
	}
}

func testSameBaseConflict(t *testing.T, backend string) {
	fx := newFixture(t, backend)
	err := fx.race(t, fx.columnCommit(t, "a.parquet", "cf1.parquet"), fx.columnCommit(t, "a.parquet", "cf2.parquet"))
	require.Error(t, err)
	require.Equal(t, fault.CommitFailed, fault.KindOf(err), "409: %v", err)
	rows, err := fx.svc.V4Commits().LiveColumnFiles(context.Background(), "wh", fx.id, nil)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.True(t, strings.HasSuffix(rows[0].ColumnFiles[0].Location, "cf2.parquet"), "the winner's file stays")
}

// TestColumnCommitWithSeveralFilesOnSeveralBases commits three column files
// over two base files in one commit (footers are read concurrently; run
// with -race) and checks what each base carries afterwards.
func TestColumnCommitWithSeveralFilesOnSeveralBases(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newFixture(t, backend)
			close(fx.gate.release)
			col := func(name string, ids ...int) service.ColumnFileInput {
				var fields []arrow.Field
				for _, id := range ids {
					fields = append(fields, arrow.Field{Name: map[int]string{2: "score", 3: "rank"}[id], Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(id)})
				}
				size := writeFile(t, filepath.Join(fx.dir, "data", name), fields, 4)
				return service.ColumnFileInput{Location: "data/" + name, FileFormat: "parquet", FieldIDs: ids, FileSizeInBytes: size, RecordCount: 4}
			}
			a1, a2, b1 := col("a-score.parquet", 2), col("a-rank.parquet", 3), col("b-both.parquet", 2, 3)
			a1.DataFile, a2.DataFile, b1.DataFile = "data/a.parquet", "data/a.parquet", "data/b.parquet"
			res, err := fx.svc.CommitColumnFiles(context.Background(), "wh", service.ColumnFilesCommit{Ident: fx.id, ColumnFiles: []service.ColumnFileInput{a1, a2, b1}})
			require.NoError(t, err)
			require.Contains(t, string(res.Metadata), `"added-column-files":"3"`)
			rows, err := fx.svc.V4Commits().LiveColumnFiles(context.Background(), "wh", fx.id, nil)
			require.NoError(t, err)
			require.Len(t, rows, 2)
			got := map[string][]string{}
			for _, r := range rows {
				for _, cf := range r.ColumnFiles {
					got[filepath.Base(r.DataFile)] = append(got[filepath.Base(r.DataFile)], fmt.Sprintf("%s%v", filepath.Base(cf.Location), cf.FieldIDs))
				}
			}
			require.ElementsMatch(t, []string{"a-score.parquet[2]", "a-rank.parquet[3]"}, got["a.parquet"])
			require.Equal(t, []string{"b-both.parquet[2 3]"}, got["b.parquet"])
		})
	}
}
