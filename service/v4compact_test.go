package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// compactRows is the row count of the round-trip fixture's files.
const compactRows = 2000

// writeValues writes one Parquet file whose column j holds f(j, i) in row i.
func writeValues(t *testing.T, path string, fields []arrow.Field, n int, f func(j, i int) float64) int64 {
	t.Helper()
	return parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		for i := 0; i < n; i++ {
			for j, fl := range fields {
				if fl.Type.ID() == arrow.INT64 {
					b.Field(j).(*array.Int64Builder).Append(int64(i))
				} else {
					b.Field(j).(*array.Float64Builder).Append(f(j, i))
				}
			}
		}
	})
}

// writeDVFile writes a deletion vector for dataFile (absolute) at rel.
func writeDVFile(t *testing.T, fx *fixture, rel, dataFile string, positions ...int64) service.DeletionVectorInput {
	t.Helper()
	w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	require.NoError(t, w.Add(dataFile, positions, 0, nil))
	files, err := w.Flush(context.Background(), filepath.Join(fx.dir, rel))
	require.NoError(t, err)
	require.Len(t, files, 1)
	return service.DeletionVectorInput{DataFile: dataFile, Location: rel, Offset: *files[0].ContentOffset(),
		SizeInBytes: *files[0].ContentSizeInBytes(), Cardinality: files[0].Count()}
}

// compactFixture is newFixture's table with a bigger file c that has two
// column files (score twice, then rank) and a deletion vector.
func compactFixture(t *testing.T, backend string) *fixture {
	fx := newFixture(t, backend)
	close(fx.gate.release) // no gating here
	ctx := context.Background()
	three := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md(1)},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(2)},
		{Name: "rank", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(3)}}
	size := writeValues(t, filepath.Join(fx.dir, "data/c.parquet"), three, compactRows, func(j, i int) float64 { return float64(j*i) + 0.5 })
	_, err := fx.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: []service.DataFileInput{
		{Location: "data/c.parquet", FileFormat: "parquet", RecordCount: compactRows, FileSizeInBytes: size}}})
	require.NoError(t, err)
	for k, upd := range []struct {
		name string
		id   int
	}{{"c-score1.parquet", 2}, {"c-score2.parquet", 2}, {"c-rank.parquet", 3}} {
		one := []arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(upd.id)}}
		sz := writeValues(t, filepath.Join(fx.dir, "data", upd.name), one, compactRows, func(_, i int) float64 { return float64(100*(k+1) + i) })
		_, err := fx.svc.CommitColumnFiles(ctx, "wh", service.ColumnFilesCommit{Ident: fx.id, ColumnFiles: []service.ColumnFileInput{{
			DataFile: "data/c.parquet", Location: "data/" + upd.name, FileFormat: "parquet", FieldIDs: []int{upd.id}, FileSizeInBytes: sz, RecordCount: compactRows}}})
		require.NoError(t, err)
	}
	d := writeDVFile(t, fx, "data/c-dv.puffin", fx.loc+"/data/c.parquet", 0, 7, 8, 1999)
	_, err = fx.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, SetDeletionVectors: []service.DeletionVectorInput{d}})
	require.NoError(t, err)
	return fx
}

func localOpen(_ context.Context, loc string) (stitch.File, error) {
	return os.Open(strings.TrimPrefix(loc, "file://"))
}

var compactSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 3, Name: "rank", Type: iceberg.PrimitiveTypes.Float64})

// liveRow is a table row as a reader sees it.
type liveRow struct {
	ID          int64
	Score, Rank float64
}

// tableRows reads every live row of the table by row id, planning with
// column files and stitching; row ids come from a stored _row_id column
// when the file has one, else from first_row_id + position.
func tableRows(t *testing.T, fx *fixture) map[int64]liveRow {
	ctx := context.Background()
	res, err := fx.svc.Planner().PlanScan(ctx, "wh", fx.id, service.PlanRequest{ColumnFilesOK: true, CaseSensitive: true})
	require.NoError(t, err)
	out := map[int64]liveRow{}
	for _, task := range res.Tasks {
		st := stitch.Task{DataFile: task.Location, RecordCount: task.RecordCount}
		for _, cf := range task.ColumnFiles {
			st.ColumnFiles = append(st.ColumnFiles, stitch.ColumnFile{Location: v4manifest.Resolve(fx.loc, cf.Location), FieldIDs: cf.FieldIDs})
		}
		rec, err := stitch.Read(ctx, localOpen, compactSchema, st, []int{1, 2, 3})
		require.NoError(t, err)
		ids := storedRowIDs(t, task.Location)
		deleted := dvPositions(t, fx, task.DeletionVector)
		require.NotNil(t, task.FirstRowID)
		for i := 0; i < int(rec.NumRows()); i++ {
			if deleted[int64(i)] {
				continue
			}
			rid := *task.FirstRowID + int64(i)
			if ids != nil {
				rid = ids[i]
			}
			_, dup := out[rid]
			require.False(t, dup, "row id %d appears twice", rid)
			out[rid] = liveRow{rec.Column(0).(*array.Int64).Value(i), rec.Column(1).(*array.Float64).Value(i), rec.Column(2).(*array.Float64).Value(i)}
		}
		rec.Release()
	}
	return out
}

// storedRowIDs reads a file's _row_id column, nil when it has none.
func storedRowIDs(t *testing.T, loc string) []int64 {
	f, err := localOpen(context.Background(), loc)
	require.NoError(t, err)
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	require.NoError(t, err)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	for c := 0; c < int(tbl.NumCols()); c++ {
		if v, _ := tbl.Schema().Field(c).Metadata.GetValue("PARQUET:field_id"); v == "2147483540" {
			var ids []int64
			for _, ch := range tbl.Column(c).Data().Chunks() {
				ids = append(ids, ch.(*array.Int64).Int64Values()...)
			}
			return ids
		}
	}
	return nil
}

// dvPositions decodes a task's deletion vector (empty when none).
func dvPositions(t *testing.T, fx *fixture, d *service.DeletionVectorRef) map[int64]bool {
	out := map[int64]bool{}
	if d == nil {
		return out
	}
	raw, err := os.ReadFile(strings.TrimPrefix(v4manifest.Resolve(fx.loc, d.Location), "file://"))
	require.NoError(t, err)
	bm, err := dv.DeserializeDV(raw[d.Offset:d.Offset+d.SizeInBytes], d.Cardinality)
	require.NoError(t, err)
	for i := int64(0); i < compactRows; i++ {
		if bm.Contains(uint64(i)) {
			out[i] = true
		}
	}
	return out
}

// TestCompactionRoundTrip: folding c (two live column files, one retired,
// and a deletion vector) keeps every live row and its row id, drops the
// deleted rows, shrinks the bytes and leaves no column file behind.
func TestCompactionRoundTrip(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testCompactionRoundTrip(t, backend) })
	}
}

func testCompactionRoundTrip(t *testing.T, backend string) {
	fx := compactFixture(t, backend)
	ctx := context.Background()
	before := tableRows(t, fx)
	require.Len(t, before, 2*4+compactRows-4)
	plan, err := fx.svc.V4Commits().PlanCompaction(ctx, "wh", fx.id)
	require.NoError(t, err)
	require.Len(t, plan.Candidates, 1)
	c := plan.Candidates[0]
	require.Equal(t, fx.loc+"/data/c.parquet", c.DataFile)
	require.Contains(t, c.Reasons, compact.ReasonRetiredBytes)
	require.Len(t, c.ColumnFiles, 2, "score1 was superseded by score2")
	rep, err := fx.svc.V4Commits().Compact(ctx, "wh", fx.id, service.CompactOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Folds, 1)
	fold := rep.Folds[0]
	require.Empty(t, fold.Error)
	require.Equal(t, int64(compactRows-4), fold.RowsAfter)
	require.Less(t, fold.BytesAfter, fold.BytesBefore, "folding shrinks the bytes read")
	after := tableRows(t, fx)
	require.Equal(t, before, after, "same rows under the same row ids")
	live, err := fx.svc.V4Commits().LiveColumnFiles(ctx, "wh", fx.id, nil)
	require.NoError(t, err)
	require.Empty(t, live)
	again, err := fx.svc.V4Commits().PlanCompaction(ctx, "wh", fx.id)
	require.NoError(t, err)
	require.Empty(t, again.Candidates, "nothing left to fold")
	// The folded file is indexed: a column commit finds it as a base.
	one := []arrow.Field{{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(2)}}
	sz := writeValues(t, filepath.Join(fx.dir, "data/folded-score.parquet"), one, compactRows-4, func(_, i int) float64 { return -float64(i) })
	_, err = fx.svc.CommitColumnFiles(ctx, "wh", service.ColumnFilesCommit{Ident: fx.id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: fold.NewFile, Location: "data/folded-score.parquet", FileFormat: "parquet", FieldIDs: []int{2}, FileSizeInBytes: sz, RecordCount: compactRows - 4}}})
	require.NoError(t, err)
	updated := tableRows(t, fx)
	require.Len(t, updated, len(before))
	require.Equal(t, before[8+1].ID, updated[8+1].ID, "row ids still address the same rows")
}

// TestCompactionConflicts: a column commit that lands between the rewrite
// and its commit makes the compaction a 409 (nothing committed), both when
// it landed before the compaction read the table and when it wins the race
// to the pointer swap.
func TestCompactionConflicts(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testCompactionConflicts(t, backend) })
	}
}

// rewriteOf rewrites base a of newFixture's table after a column commit
// on it, returning the commit of the rewrite.
func rewriteOf(t *testing.T, fx *fixture) service.CompactionCommit {
	ctx := context.Background()
	close(fx.gate.release)
	_, err := fx.svc.CommitColumnFiles(ctx, "wh", fx.columnCommit(t, "a.parquet", "a-s1.parquet"))
	require.NoError(t, err)
	<-fx.gate.reached
	fx.gate.reached, fx.gate.release = make(chan struct{}), make(chan struct{})
	fx.gate.once = sync.Once{}
	base := fx.loc + "/data/a.parquet"
	task := stitch.Task{DataFile: base, RecordCount: 4, ColumnFiles: []stitch.ColumnFile{{Location: fx.loc + "/data/a-s1.parquet", FieldIDs: []int{2}}}}
	f, err := os.Create(filepath.Join(fx.dir, "data/a-compacted.parquet"))
	require.NoError(t, err)
	out, err := compact.Rewrite(ctx, localOpen, f, compact.Input{Task: task, FirstRowID: 0, Schema: compactSchema})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return service.CompactionCommit{Ident: fx.id, Rewrites: []service.CompactionRewrite{{DataFile: "data/a.parquet",
		ColumnFiles: []string{"data/a-s1.parquet"}, Location: "data/a-compacted.parquet", FileSizeInBytes: out.Bytes, RecordCount: out.Rows}}}
}

func requireConflict(t *testing.T, err error) {
	t.Helper()
	var se *fault.Error
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, fault.CommitFailed, se.Kind, "%v", err)
}

func testCompactionConflicts(t *testing.T, backend string) {
	ctx := context.Background()
	t.Run("updated-before", func(t *testing.T) {
		fx := newFixture(t, backend)
		cc := rewriteOf(t, fx)
		close(fx.gate.release)
		_, err := fx.svc.CommitColumnFiles(ctx, "wh", fx.columnCommit(t, "a.parquet", "a-s2.parquet"))
		require.NoError(t, err)
		_, err = fx.svc.CommitCompaction(ctx, "wh", cc)
		requireConflict(t, err)
		live, err := fx.svc.V4Commits().LiveColumnFiles(ctx, "wh", fx.id, nil)
		require.NoError(t, err)
		require.Len(t, live, 1, "the base and its newest column file are still live")
	})
	t.Run("race", func(t *testing.T) {
		fx := newFixture(t, backend)
		cc := rewriteOf(t, fx)
		errA := make(chan error, 1)
		go func() {
			_, err := fx.svc.CommitCompaction(ctx, "wh", cc)
			errA <- err
		}()
		<-fx.gate.reached
		_, err := fx.svc.CommitColumnFiles(ctx, "wh", fx.columnCommit(t, "a.parquet", "a-s2.parquet"))
		require.NoError(t, err, "the column commit lands while the compaction waits")
		close(fx.gate.release)
		requireConflict(t, <-errA)
	})
	t.Run("lands-alone", func(t *testing.T) {
		fx := newFixture(t, backend)
		cc := rewriteOf(t, fx)
		close(fx.gate.release)
		_, err := fx.svc.CommitCompaction(ctx, "wh", cc)
		require.NoError(t, err)
	})
}

func setProps(t *testing.T, fx *fixture, kv string) {
	_, err := fx.svc.CommitTable(context.Background(), "wh", service.TableChange{Ident: fx.id,
		Updates: []byte(`[{"action":"set-properties","updates":{` + kv + `}}]`)})
	require.NoError(t, err)
}

// TestCompactionThresholds: the table properties decide which bases the
// plan picks and why; a base without column files or DV is never picked.
func TestCompactionThresholds(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := compactFixture(t, backend)
			ctx := context.Background()
			_, err := fx.svc.CommitColumnFiles(ctx, "wh", fx.columnCommit(t, "a.parquet", "a-s1.parquet"))
			require.NoError(t, err)
			pick := func() map[string][]string {
				plan, err := fx.svc.V4Commits().PlanCompaction(ctx, "wh", fx.id)
				require.NoError(t, err)
				out := map[string][]string{}
				for _, c := range plan.Candidates {
					out[v4manifest.Relativize(fx.loc, c.DataFile)] = c.Reasons
				}
				return out
			}
			setProps(t, fx, `"write.column-files.compact.max-files":"1","write.column-files.compact.max-retired-ratio":"1000"`)
			require.Equal(t, map[string][]string{"data/c.parquet": {compact.ReasonTooManyFiles}}, pick())
			setProps(t, fx, `"write.column-files.compact.max-files":"0"`)
			require.Equal(t, map[string][]string{"data/a.parquet": {compact.ReasonTooManyFiles}, "data/c.parquet": {compact.ReasonTooManyFiles}}, pick())
			setProps(t, fx, `"write.column-files.compact.max-files":"100","write.column-files.compact.max-retired-ratio":"0"`)
			require.Equal(t, map[string][]string{"data/a.parquet": {compact.ReasonRetiredBytes}, "data/c.parquet": {compact.ReasonRetiredBytes}}, pick())
			setProps(t, fx, `"write.column-files.compact.max-files":"lots"`)
			_, err = fx.svc.V4Commits().PlanCompaction(ctx, "wh", fx.id)
			require.Error(t, err)
		})
	}
}

// TestCompactionCommitValidation: a rewritten file is refused, with a
// reason and nothing committed, when it lacks _row_id, when its size or
// row count is not as declared, and when it lies outside the table.
func TestCompactionCommitValidation(t *testing.T) {
	fx := newFixture(t, "sqlite")
	cc := rewriteOf(t, fx)
	close(fx.gate.release)
	ctx := context.Background()
	noIDs := filepath.Join(fx.dir, "data/no-ids.parquet")
	size := writeFile(t, noIDs, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md(1)},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(2)},
		{Name: "rank", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(3)}}, 4)
	for _, tc := range []struct {
		name, reason string
		edit         func(*service.CompactionRewrite)
	}{
		{"no-row-ids", validation.ReasonRowIDsNotMaterialized, func(r *service.CompactionRewrite) {
			r.Location, r.FileSizeInBytes = "data/no-ids.parquet", size
		}},
		{"size", "file-size-mismatch", func(r *service.CompactionRewrite) { r.FileSizeInBytes++ }},
		{"rows", "record-count-mismatch", func(r *service.CompactionRewrite) { r.RecordCount++ }},
		{"outside", "location-outside-table", func(r *service.CompactionRewrite) { r.Location = "file:///elsewhere/x.parquet" }},
		{"unreadable", "data-file-unreadable", func(r *service.CompactionRewrite) { r.Location = "data/missing.parquet" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cc
			c.Rewrites = []service.CompactionRewrite{cc.Rewrites[0]}
			tc.edit(&c.Rewrites[0])
			_, err := fx.svc.CommitCompaction(ctx, "wh", c)
			require.Equal(t, tc.reason, reasonOf(err), "%v", err)
			require.NotContains(t, err.Error(), fx.dir, "no server path in the message")
		})
	}
	live, err := fx.svc.V4Commits().LiveColumnFiles(ctx, "wh", fx.id, nil)
	require.NoError(t, err)
	require.Len(t, live, 1, "nothing was committed")
}

// TestCompactionWritesToDataPath: the folded file goes where the table
// writes data (write.data.path), as an engine's rewrite would.
func TestCompactionWritesToDataPath(t *testing.T) {
	fx := compactFixture(t, "sqlite")
	ctx := context.Background()
	_, err := fx.svc.CommitTable(ctx, "wh", service.TableChange{Ident: fx.id, Requirements: json.RawMessage(`[]`),
		Updates: json.RawMessage(`[{"action":"set-properties","updates":{"write.data.path":"` + fx.loc + `/custom-data"}}]`)})
	require.NoError(t, err)
	rep, err := fx.svc.V4Commits().Compact(ctx, "wh", fx.id, service.CompactOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Folds, 1)
	require.Empty(t, rep.Folds[0].Error)
	require.True(t, strings.HasPrefix(rep.Folds[0].NewFile, "custom-data/compacted-"), rep.Folds[0].NewFile)
	_, err = os.Stat(filepath.Join(fx.dir, rep.Folds[0].NewFile))
	require.NoError(t, err)
}
