package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// TestDataDirMoved: a data directory whose default warehouse was created
// under another directory is refused with the command that serves it; one
// in place, a fresh one and a non-embedded layout pass.
func TestDataDirMoved(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	require.NoError(t, os.MkdirAll(filepath.Join(d1, "warehouse"), 0o755))
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(d1, "catalog.db"))
	require.NoError(t, err)
	sf := storageFlags{dataDir: d1}
	require.NoError(t, checkDataDirMoved(ctx, st, sf), "no warehouse yet")
	require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "default", Location: "file://" + filepath.Join(d1, "warehouse")}))
	require.NoError(t, checkDataDirMoved(ctx, st, sf), "in place")
	require.NoError(t, checkDataDirMoved(ctx, st, storageFlags{dataDir: d2, databaseURL: "postgres://x"}), "not embedded")
	st.Close()

	require.NoError(t, os.Rename(d1, d2))
	var out bytes.Buffer
	err = run([]string{"serve", "--data-dir", d2, "--listen", "127.0.0.1:0"}, &out, &out)
	require.ErrorContains(t, err, "created as "+d1)
	require.ErrorContains(t, err, "mv "+d2+" "+d1+" && catalog serve --data-dir "+d1)

	// Copied rather than moved: the old directory is still there.
	require.NoError(t, os.MkdirAll(filepath.Join(d1, "warehouse"), 0o755))
	st, err = sqlstore.OpenSQLite(ctx, filepath.Join(d2, "catalog.db"))
	require.NoError(t, err)
	defer st.Close()
	err = checkDataDirMoved(ctx, st, storageFlags{dataDir: d2})
	require.ErrorContains(t, err, "serve it where it was created: catalog serve --data-dir "+d1)
}
