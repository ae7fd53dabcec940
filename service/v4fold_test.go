package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/v4manifest"
)

// foldRows is the row count of the fold fixture.
const foldRows = 300

// foldFields are foldSchema's top-level field ids (ids as the catalog
// assigns them, depth first).
var foldFields = []int{1, 2, 3, 4, 5, 6, 8}

// foldSchema has a field of each kind a fold could spoil. req starts
// optional: a column file gives it nulls, as before commits refused those.
func foldSchema(reqRequired bool) *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "x", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 5, Name: "req", Type: iceberg.PrimitiveTypes.Int64, Required: reqRequired},
		iceberg.NestedField{ID: 6, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 8, Name: "attrs", Type: &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 10, ValueType: iceberg.PrimitiveTypes.Int64}})
}

// foldValue is row i of field id in generation gen (0: the base file,
// 1 and 2: column files), as JSON for array.FromJSON; doubles apart.
func foldValue(id, gen, i int) string {
	switch id {
	case 3:
		return []string{`null`, `""`, fmt.Sprintf(`"s%d-%d"`, gen, i)}[i%3]
	case 4:
		return []string{`""`, `null`, `"AAEC"`}[i%3]
	case 6:
		return []string{`null`, `[]`, fmt.Sprintf(`[%d, null, %d]`, gen, i)}[i%3]
	case 8:
		return []string{`[]`, `null`, fmt.Sprintf(`[{"key": "", "value": %d}, {"key": "k", "value": null}]`, i+gen)}[i%3]
	}
	return fmt.Sprint(i + 1000*gen)
}

// foldDouble is row i of x in generation gen: NaN with a payload, −0.0,
// null and plain values in turn.
func foldDouble(gen, i int) (float64, bool) {
	switch i % 4 {
	case 0:
		return math.Float64frombits(0x7ff8_0000_0000_0000 | uint64(gen*1000+i)), true
	case 1:
		return math.Copysign(0, -1), true
	case 2:
		return 0, false
	}
	return float64(gen*1000 + i), true
}

// writeFold writes generation gen of fields ids as a Parquet file at rel.
func writeFold(t *testing.T, fx *fixture, sc *iceberg.Schema, rel string, gen int, ids ...int) int64 {
	fields := make([]arrow.Field, len(ids))
	for k, id := range ids {
		f, _ := sc.FindFieldByID(id)
		at, err := table.TypeToArrowType(f.Type, true, false)
		require.NoError(t, err)
		fields[k] = arrow.Field{Name: f.Name, Type: at, Nullable: !f.Required, Metadata: md(id)}
	}
	return parquettest.Write(t, filepath.Join(fx.dir, rel), fields, func(b *array.RecordBuilder) {
		for k, id := range ids {
			for i := 0; i < foldRows; i++ {
				if id == 2 {
					v, ok := foldDouble(gen, i)
					if ok {
						b.Field(k).(*array.Float64Builder).Append(v)
					} else {
						b.Field(k).AppendNull()
					}
					continue
				}
				if id == 5 && gen > 0 && i%50 == 7 {
					b.Field(k).AppendNull()
					continue
				}
				require.NoError(t, b.Field(k).UnmarshalJSON([]byte("["+foldValue(id, gen, i)+"]")))
			}
		}
	})
}

// foldFixture creates a v4 table of foldSchema(false) with one base file.
func foldFixture(t *testing.T, backend string) *fixture {
	ctx := context.Background()
	st := openStore(t, backend)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	sc, err := json.Marshal(foldSchema(false))
	require.NoError(t, err)
	res, err := svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t", Schema: sc,
		Properties: map[string]string{"format-version": "4"}})
	require.NoError(t, err)
	var meta struct {
		Location string `json:"location"`
	}
	require.NoError(t, jsonUnmarshal(res.Metadata, &meta))
	fx := &fixture{svc: svc, loc: meta.Location, dir: strings.TrimPrefix(meta.Location, "file://"), id: service.Ident{Namespace: []string{"ns"}, Name: "t"}}
	size := writeFold(t, fx, foldSchema(false), "data/base.parquet", 0, foldFields...)
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: []service.DataFileInput{
		{Location: "data/base.parquet", FileFormat: "parquet", RecordCount: foldRows, FileSizeInBytes: size}}})
	require.NoError(t, err)
	return fx
}

// commitColumns commits generation gen of fields ids as a column file.
func commitColumns(t *testing.T, fx *fixture, rel string, gen int, ids ...int) {
	size := writeFold(t, fx, foldSchema(false), rel, gen, ids...)
	_, err := fx.svc.CommitColumnFiles(context.Background(), "wh", service.ColumnFilesCommit{Ident: fx.id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: "data/base.parquet", Location: rel, FileFormat: "parquet", FieldIDs: ids, FileSizeInBytes: size, RecordCount: foldRows}}})
	require.NoError(t, err)
}

// cell renders a value exactly: doubles by their bits, nulls as "(null)"
// (distinct from an empty string or binary), nested values whole.
func cell(a arrow.Array, i int) string {
	if f, ok := a.(*array.Float64); ok && f.IsValid(i) {
		return fmt.Sprintf("bits:%016x", math.Float64bits(f.Value(i)))
	}
	if a.IsNull(i) {
		return "(null)"
	}
	return fmt.Sprintf("%q", a.ValueStr(i))
}

// readTable reads every live row of the table, stitched, rendered by
// cell, sorted by id.
func readTable(t *testing.T, fx *fixture, sc *iceberg.Schema) [][]string {
	ctx := context.Background()
	res, err := fx.svc.Planner().PlanScan(ctx, "wh", fx.id, service.PlanRequest{ColumnFilesOK: true, CaseSensitive: true})
	require.NoError(t, err)
	var out [][]string
	for _, task := range res.Tasks {
		st := stitch.Task{DataFile: task.Location, RecordCount: task.RecordCount}
		for _, cf := range task.ColumnFiles {
			st.ColumnFiles = append(st.ColumnFiles, stitch.ColumnFile{Location: v4manifest.Resolve(fx.loc, cf.Location), FieldIDs: cf.FieldIDs})
		}
		rec, err := stitch.Read(ctx, localOpen, sc, st, foldFields)
		require.NoError(t, err)
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for c := range row {
				row[c] = cell(rec.Column(c), i)
			}
			out = append(out, row)
		}
		rec.Release()
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// expected renders what the table holds: field id's values of generation
// gen[id] (0 when absent).
func expected(t *testing.T, gen map[int]int) [][]string {
	sc := foldSchema(false)
	dir := t.TempDir()
	sub := &fixture{dir: dir}
	var out [][]string
	rec := map[int]arrow.Array{}
	for _, id := range foldFields {
		writeFold(t, sub, sc, fmt.Sprintf("e%d.parquet", id), gen[id], id)
		r, err := stitch.Read(context.Background(), localOpen, sc, stitch.Task{DataFile: filepath.Join(dir, fmt.Sprintf("e%d.parquet", id)), RecordCount: foldRows}, []int{id})
		require.NoError(t, err)
		t.Cleanup(r.Release)
		rec[id] = r.Column(0)
	}
	for i := 0; i < foldRows; i++ {
		row := make([]string, len(foldFields))
		for k, id := range foldFields {
			row[k] = cell(rec[id], i)
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// TestFoldKeepsValues: folding a base whose x was replaced twice and whose
// strings, binaries and lists come from a column file keeps every value:
// nulls, NaN payloads and −0.0 bit for bit, empty strings and binaries
// apart from nulls, nested lists (from the column file) and maps (from the
// base: a column file cannot carry a map, whose keys Parquet makes
// REQUIRED) whole, and x's newest values.
func TestFoldKeepsValues(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := foldFixture(t, backend)
			commitColumns(t, fx, "data/x1.parquet", 1, 2)
			commitColumns(t, fx, "data/nested.parquet", 1, 3, 4, 6)
			commitColumns(t, fx, "data/x2.parquet", 2, 2)
			sc := foldSchema(false)
			want := expected(t, map[int]int{2: 2, 3: 1, 4: 1, 6: 1})
			require.Equal(t, want, readTable(t, fx, sc), "the stitched table before folding")
			all := compact.FoldAll(false)
			rep, err := fx.svc.V4Commits().Compact(context.Background(), "wh", fx.id, service.CompactOptions{Thresholds: &all})
			require.NoError(t, err)
			require.Len(t, rep.Folds, 1)
			require.Empty(t, rep.Folds[0].Error)
			live, err := fx.svc.V4Commits().LiveColumnFiles(context.Background(), "wh", fx.id, nil)
			require.NoError(t, err)
			require.Empty(t, live, "folded")
			require.Equal(t, want, readTable(t, fx, sc), "the folded table")
		})
	}
}

// TestFoldRefusesRequiredNulls: a table whose required field holds nulls
// in a column file (committed while it was optional) is not folded: 400
// required-field-nulls naming the field, nothing committed, the table
// read as before; an export with compact refuses likewise.
func TestFoldRefusesRequiredNulls(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			fx := foldFixture(t, backend)
			commitColumns(t, fx, "data/req.parquet", 1, 5)
			sc, err := json.Marshal(foldSchema(true))
			require.NoError(t, err)
			_, err = fx.svc.CommitTable(ctx, "wh", service.TableChange{Ident: fx.id, Requirements: json.RawMessage(`[]`),
				Updates: json.RawMessage(`[{"action":"add-schema","schema":` + strings.Replace(string(sc), `"schema-id":0`, `"schema-id":1`, 1) +
					`},{"action":"set-current-schema","schema-id":-1}]`)})
			require.NoError(t, err)
			before := readTable(t, fx, foldSchema(false))
			all := compact.FoldAll(false)
			rep, err := fx.svc.V4Commits().Compact(ctx, "wh", fx.id, service.CompactOptions{Thresholds: &all})
			require.NoError(t, err)
			require.Len(t, rep.Folds, 1)
			ferr := rep.Folds[0].Err()
			require.Equal(t, "required-field-nulls", reasonOf(ferr), "%v", ferr)
			require.Equal(t, fault.Validation, fault.KindOf(ferr))
			require.Contains(t, ferr.Error(), "req (id 5)")
			require.Contains(t, rep.Folds[0].Error, "req (id 5)")
			require.NotContains(t, ferr.Error(), fx.dir, "no server path")
			live, err := fx.svc.V4Commits().LiveColumnFiles(ctx, "wh", fx.id, nil)
			require.NoError(t, err)
			require.Len(t, live, 1, "nothing committed")
			require.Equal(t, before, readTable(t, fx, foldSchema(false)), "the table reads as before")
			_, err = fx.svc.ExportTable(ctx, "wh", service.ExportInput{Source: fx.id,
				Target: service.Ident{Namespace: []string{"ns"}, Name: "v3"}, Compact: true})
			require.Equal(t, "required-field-nulls", reasonOf(err), "%v", err)
		})
	}
}
