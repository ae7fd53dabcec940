package planning_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// v4Fixture is a format version 4 table made through the catalog (package
// service, which commits its files) and a Planner over the same database
// and files, as the service builds its own.
type v4Fixture struct {
	svc *service.Service
	pl  *planning.Planner
	w   *store.Warehouse
	id  ident.Ident
}

// newV4Fixture creates table ns.name with schema and spec (JSON; spec may
// be nil) in warehouse wh.
func newV4Fixture(tb testing.TB, opts service.Options, name string, schema, spec []byte) *v4Fixture {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "c.db"))
	require.NoError(tb, err)
	tb.Cleanup(st.Close)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	files := storage.NewProvider()
	svc := service.New(st, files, opts)
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+tb.TempDir(), nil)
	require.NoError(tb, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(tb, err)
	_, err = svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: name,
		Properties: map[string]string{"format-version": "4"}, Schema: schema, Spec: spec})
	require.NoError(tb, err)
	w, err := st.WarehouseGet(ctx, "wh")
	require.NoError(tb, err)
	maxTasks := opts.MaxPlanTasks
	if maxTasks <= 0 {
		maxTasks = 1000 // service.New's default
	}
	readers := v4read.New(func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error) {
		return files.For(ctx, loc, w.Properties)
	}, func(_ *store.Warehouse, _, loc string) string { return loc })
	ta := tableaccess.New(tableaccess.Options{Store: st, Files: files, Authorizer: access.AllowAll{}, Clock: time.Now, Logger: opts.Logger})
	pl := planning.New(planning.Deps{Tables: ta, Readers: readers, MaxPlanTasks: maxTasks})
	return &v4Fixture{svc: svc, pl: pl, w: w, id: ident.Ident{Namespace: []string{"ns"}, Name: name}}
}
