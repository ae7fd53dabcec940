package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// TestSQLiteLockedIsUnavailable: a file held by another writer beyond the
// busy timeout is store.ErrUnavailable; once released, writes go through.
func TestSQLiteLockedIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := OpenSQLite(context.Background(), path, WithBusyTimeout(200*time.Millisecond))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///wh"}))

	other, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)

	start := time.Now()
	_, err = st.NamespaceCreate(ctx, "wh", []string{"a"}, nil)
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.Less(t, time.Since(start), 5*time.Second, "no retry loop on top of the busy timeout")
	err = st.WarehouseCreate(ctx, &store.Warehouse{Name: "w2", Location: "file:///w2"})
	require.ErrorIs(t, err, store.ErrUnavailable)
	var de *sqldb.Error
	require.True(t, errors.As(err, &de))

	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	_, err = st.NamespaceCreate(ctx, "wh", []string{"a"}, nil)
	require.NoError(t, err)
}
