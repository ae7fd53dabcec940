package service

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store/sqlstore"
)

// newV4TestTable opens a service on a fresh SQLite catalog with warehouse
// "wh" (a temporary directory) and namespace "ns", and creates the format
// version 4 table ns.t with one long column, id (field 1). opts.Logger is
// set when empty.
func newV4TestTable(t *testing.T, opts Options) (*Service, Ident) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	svc := New(st, storage.NewProvider(), opts)
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	_, err = svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, CreateTableInput{Name: "t", Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)})
	require.NoError(t, err)
	return svc, Ident{Namespace: []string{"ns"}, Name: "t"}
}
