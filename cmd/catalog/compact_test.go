package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// compactTable makes a v4 table in the embedded database under dir with
// one 100-row base file whose column "v" was replaced by a column file,
// and a retired-ratio threshold (0.1) low enough for it to be picked.
func compactTable(t *testing.T, dir string) {
	ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "catalog.db"))
	require.NoError(t, err)
	defer st.Close()
	svc := service.New(st, storage.NewProvider(), service.Options{})
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+filepath.Join(dir, "wh"), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	res, err := svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t", Properties: map[string]string{"format-version": "4", "write.column-files.compact.max-retired-ratio": "0.1"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"k","type":"long","required":true},{"id":2,"name":"v","type":"long","required":false}]}`)})
	require.NoError(t, err)
	var meta struct {
		Location string `json:"location"`
	}
	require.NoError(t, json.Unmarshal(res.Metadata, &meta))
	tdir := strings.TrimPrefix(meta.Location, "file://")
	field := func(name string, id string, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: nullable, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{id})}
	}
	fill := func(b *array.RecordBuilder) {
		for i := 0; i < 100; i++ {
			for j := range b.Fields() {
				b.Field(j).(*array.Int64Builder).Append(int64(i * (j + 1)))
			}
		}
	}
	id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
	size := parquettest.Write(t, filepath.Join(tdir, "data/base.parquet"), []arrow.Field{field("k", "1", false), field("v", "2", true)}, fill)
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: []service.DataFileInput{
		{Location: "data/base.parquet", FileFormat: "parquet", RecordCount: 100, FileSizeInBytes: size}}})
	require.NoError(t, err)
	csize := parquettest.Write(t, filepath.Join(tdir, "data/v.parquet"), []arrow.Field{field("v", "2", true)}, fill)
	_, err = svc.CommitColumnFiles(ctx, "wh", service.ColumnFilesCommit{Ident: id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: "data/base.parquet", Location: "data/v.parquet", FileFormat: "parquet", FieldIDs: []int{2}, FileSizeInBytes: csize, RecordCount: 100}}})
	require.NoError(t, err)
}

// TestCompactCLI: `catalog compact` folds the base and prints what it did;
// a dry run afterwards finds nothing left to fold.
func TestCompactCLI(t *testing.T) {
	dir := t.TempDir()
	compactTable(t, dir)
	var out, errb bytes.Buffer
	require.NoError(t, run([]string{"compact", "ns.t", "--warehouse", "wh", "--data-dir", dir}, &out, &errb), errb.String())
	var rep struct {
		Candidates []map[string]any `json:"candidates"`
		Folds      []struct {
			NewFile   string `json:"new-file"`
			RowsAfter int64  `json:"rows-after"`
			Error     string `json:"error"`
		} `json:"folds"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.Len(t, rep.Folds, 1)
	require.Empty(t, rep.Folds[0].Error)
	require.Equal(t, int64(100), rep.Folds[0].RowsAfter)
	require.True(t, strings.HasPrefix(rep.Folds[0].NewFile, "data/compacted-"), rep.Folds[0].NewFile)
	out.Reset()
	require.NoError(t, run([]string{"compact", "ns.t", "--warehouse", "wh", "--data-dir", dir, "--dry-run"}, &out, &errb), errb.String())
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Empty(t, rep.Candidates)
	require.Error(t, run([]string{"compact", "nodot"}, &out, &errb))
}
