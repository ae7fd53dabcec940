package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/store/sqlstore"
)

// TestV4SummaryTotals commits files, a column file and a removal through
// the service and checks each snapshot's totals and counters, that the
// caller's snapshot-properties are kept without overriding computed keys,
// and that counting the tree (what a parent without totals gets) gives the
// totals the chain of deltas gave.
func TestV4SummaryTotals(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	s := New(st, storage.NewProvider(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err = s.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = s.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	res, err := s.Tables().CreateTable(ctx, "wh", []string{"ns"}, CreateTableInput{Name: "t", Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false},{"id":2,"name":"score","type":"double","required":false}]}`)})
	require.NoError(t, err)
	md, _, err := tablemeta.Parse(res.Metadata)
	require.NoError(t, err)
	dir := strings.TrimPrefix(md.Location(), "file://")
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	write := func(name string, n int, ids ...int) int64 {
		var fields []arrow.Field
		for _, fid := range ids {
			typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
			if fid == 2 {
				typ = arrow.PrimitiveTypes.Float64
			}
			fields = append(fields, arrow.Field{Name: fmt.Sprint("c", fid), Type: typ, Nullable: true,
				Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(fid)})})
		}
		return parquettest.Write(t, filepath.Join(dir, "data", name), fields, func(b *array.RecordBuilder) {
			for i := 0; i < n; i++ {
				for j, f := range fields {
					if f.Type.ID() == arrow.INT64 {
						b.Field(j).(*array.Int64Builder).Append(int64(i))
					} else {
						b.Field(j).(*array.Float64Builder).Append(float64(i) / 2)
					}
				}
			}
		})
	}
	summary := func(res *TableResult) map[string]string {
		md, _, err := tablemeta.Parse(res.Metadata)
		require.NoError(t, err)
		return md.CurrentSnapshot().Summary.Properties
	}
	a, b := write("a.parquet", 10, 1, 2), write("b.parquet", 6, 1, 2)
	res, err = s.CommitFiles(ctx, "wh", FilesCommit{Ident: id, AddDataFiles: []DataFileInput{
		{Location: "data/a.parquet", FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: a},
		{Location: "data/b.parquet", FileFormat: "parquet", RecordCount: 6, FileSizeInBytes: b}}})
	require.NoError(t, err)
	sum := summary(res)
	require.Equal(t, "16", sum["total-records"])
	require.Equal(t, "2", sum["total-data-files"])
	require.Equal(t, "0", sum["total-delete-files"])
	require.Equal(t, fmt.Sprint(a+b), sum["total-files-size"])
	require.Equal(t, fmt.Sprint(a+b), sum["added-files-size"])

	cf := write("cf.parquet", 10, 2)
	res, err = s.CommitColumnFiles(ctx, "wh", ColumnFilesCommit{Ident: id, ColumnFiles: []ColumnFileInput{{DataFile: "data/a.parquet",
		Location: "data/cf.parquet", FileFormat: "parquet", FieldIDs: []int{2}, FileSizeInBytes: cf, RecordCount: 10}},
		SnapshotProperties: map[string]string{"job": "rescore", "total-files-size": "1", "added-column-files": "9"}})
	require.NoError(t, err)
	sum = summary(res)
	require.Equal(t, "16", sum["total-records"], "a column file adds no rows")
	require.Equal(t, fmt.Sprint(a+b+cf), sum["total-files-size"], "a column file's bytes count")
	require.Equal(t, fmt.Sprint(cf), sum["added-files-size"])
	require.Equal(t, "1", sum["added-column-files"], "the caller cannot set a computed key")
	require.Equal(t, "rescore", sum["job"])

	res, err = s.CommitFiles(ctx, "wh", FilesCommit{Ident: id, RemoveFiles: []string{"data/a.parquet"}})
	require.NoError(t, err)
	sum = summary(res)
	require.Equal(t, "6", sum["total-records"])
	require.Equal(t, "1", sum["total-data-files"])
	require.Equal(t, fmt.Sprint(a+cf), sum["removed-files-size"], "a removed file takes its column files along")
	require.Equal(t, fmt.Sprint(b), sum["total-files-size"])

	// What a parent without totals gets: its tree counted.
	w, err := s.ta.Warehouse(ctx, "wh")
	require.NoError(t, err)
	vs, err := s.v4.Load(ctx, w, id)
	require.NoError(t, err)
	counted, err := s.v4.TreeTotals(ctx, w, vs)
	require.NoError(t, err)
	chained, ok := v4tree.ParentTotals(sum)
	require.True(t, ok)
	require.Equal(t, chained, counted)
}
