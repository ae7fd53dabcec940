package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/store/storetest"
)

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "catalog.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	})
}

func TestPostgresConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := sqlstore.OpenPostgres(context.Background(), pgtest.NewDatabase(t), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	})
}
