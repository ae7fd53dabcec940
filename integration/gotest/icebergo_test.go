//go:build interop

// Package gotest drives the built catalog binary over HTTP with
// iceberg-go's REST client (run by integration/run.sh with -tags interop).
package gotest

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

func newCatalog(t *testing.T) *rest.Catalog {
	t.Helper()
	uri := os.Getenv("CATALOG_URI")
	if uri == "" {
		t.Fatal("CATALOG_URI is not set (run integration/run.sh)")
	}
	cat, err := rest.NewCatalog(context.Background(), "lake", uri, rest.WithWarehouseLocation(os.Getenv("CATALOG_WAREHOUSE")))
	require.NoError(t, err)
	return cat
}

func TestConformance(t *testing.T) {
	catalogtest.RunCatalogTests(t, catalogtest.Config{
		NewCatalog:                  func(t *testing.T) catalog.Catalog { return newCatalog(t) },
		SupportsNamespaceProperties: true,
	})
}

func TestAppendScanRename(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	ns := table.Identifier{"igo_" + t.Name()}
	require.NoError(t, cat.CreateNamespace(ctx, ns, nil))
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl, err := cat.CreateTable(ctx, append(ns, "t"), sc)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl, err = tbl.AppendTable(ctx, array.NewTableFromRecords(asc, []arrow.RecordBatch{rec}), 10, nil)
	require.NoError(t, err)
	_, err = cat.RenameTable(ctx, append(ns, "t"), append(ns, "t2"))
	require.NoError(t, err)
	loaded, err := cat.LoadTable(ctx, append(ns, "t2"))
	require.NoError(t, err)
	out, err := loaded.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	defer out.Release()
	require.EqualValues(t, 3, out.NumRows())
	require.NoError(t, cat.PurgeTable(ctx, append(ns, "t2")))
	require.NoError(t, cat.DropNamespace(ctx, ns))
}
