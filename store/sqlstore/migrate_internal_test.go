package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/migrations"
	"github.com/lakehold/catalog/store"
)

// TestRowsFromBeforeRefsMetadata: a table written before migration 4
// (no refs_metadata) still loads after it, in full and in refs mode (the
// full document, flagged for filtering), and its next swap stores a refs
// document. Migration 4 also rolls back.
func TestRowsFromBeforeRefsMetadata(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var db *sql.DB
			var m *migrate.Migrate
			var reopen func() (*Store, error)
			switch backend {
			case "sqlite":
				path := filepath.Join(t.TempDir(), "c.db")
				var err error
				db, err = sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
				require.NoError(t, err)
				drv, err := migratesqlite.WithInstance(db, &migratesqlite.Config{})
				require.NoError(t, err)
				m = newMigrate(t, "sqlite", drv)
				reopen = func() (*Store, error) { return OpenSQLite(ctx, path) }
			case "postgres":
				dsn := pgtest.NewDatabase(t)
				cfg, err := pgxpool.ParseConfig(dsn)
				require.NoError(t, err)
				db = stdlib.OpenDB(*cfg.ConnConfig)
				drv, err := migratepgx.WithInstance(db, &migratepgx.Config{})
				require.NoError(t, err)
				m = newMigrate(t, "pgx5", drv)
				reopen = func() (*Store, error) { return OpenPostgres(ctx, dsn, true) }
			}
			defer db.Close()
			require.NoError(t, m.Migrate(3))
			for _, q := range []string{
				`INSERT INTO warehouses (id, name, location, created_at) VALUES ('w', 'wh', 'file:///wh', 0)`,
				`INSERT INTO namespaces (id, warehouse_id, name_key, parent_key) VALUES ('n', 'w', 'ns', '')`,
			} {
				_, err := db.ExecContext(ctx, q)
				require.NoError(t, err)
			}
			_, err := db.ExecContext(ctx, `INSERT INTO catalog_objects (id, warehouse_id, namespace_id, name, kind, location, metadata_location, metadata, format_version, updated_at)
				VALUES ('o', 'w', 'n', 't', 'table', 'file:///wh/ns/t', 'm0', $1, 2, 0)`, pack([]byte(`{"old":true}`)))
			require.NoError(t, err)

			st, err := reopen()
			require.NoError(t, err)
			defer st.Close()
			ref := store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable}
			got, err := st.ObjectGetRefs(ctx, ref)
			require.NoError(t, err)
			require.False(t, got.RefsOnly, "an old row has no refs document")
			require.Equal(t, `{"old":true}`, string(got.Metadata))
			require.NoError(t, st.ObjectsSwap(ctx, []store.Swap{{ObjectID: "o", ExpectedMetadataLocation: "m0",
				NewMetadataLocation: "m1", NewMetadata: []byte(`{"new":1}`), NewRefsMetadata: []byte(`{"r":1}`), NewFormatVersion: 2}}))
			got, err = st.ObjectGetRefs(ctx, ref)
			require.NoError(t, err)
			require.True(t, got.RefsOnly)
			require.Equal(t, `{"r":1}`, string(got.Metadata))

			require.NoError(t, m.Migrate(3), "migration 4 rolls back")
			var n int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM catalog_objects`).Scan(&n))
			require.Equal(t, 1, n)
		})
	}
}

func newMigrate(t *testing.T, name string, drv any) *migrate.Migrate {
	t.Helper()
	database := "sqlite"
	if name == "pgx5" {
		database = "postgres"
	}
	src, err := iofs.New(migrations.For(database), ".")
	require.NoError(t, err)
	var m *migrate.Migrate
	switch d := drv.(type) {
	case *migratepgx.Postgres:
		m, err = migrate.NewWithInstance("iofs", src, name, d)
	case *migratesqlite.Sqlite:
		m, err = migrate.NewWithInstance("iofs", src, name, d)
	}
	require.NoError(t, err)
	return m
}

// TestPostgresKeepsSmallMetadataInline: after migration 5 a row whose
// compressed metadata is a few kilobytes stays in the heap (no TOAST
// chunks written per commit); larger metadata is still TOASTed.
func TestPostgresKeepsSmallMetadataInline(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	st, err := OpenPostgres(ctx, dsn, true)
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///wh"}))
	_, err = st.NamespaceCreate(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	// Random base64 compresses to about three quarters: 4 KB → ~3 KB.
	noise := func(n int) []byte {
		b := make([]byte, n)
		_, _ = rand.NewChaCha8([32]byte{byte(n)}).Read(b)
		return []byte(`{"x":"` + base64.StdEncoding.EncodeToString(b) + `"}`)
	}
	o := &store.Object{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable,
		Location: "file:///wh/ns/t", MetadataLocation: "m0", Metadata: noise(3000), FormatVersion: 2}
	require.NoError(t, st.ObjectCreate(ctx, o))
	for i := 1; i <= 5; i++ {
		require.NoError(t, st.ObjectsSwap(ctx, []store.Swap{{ObjectID: o.ID, ExpectedMetadataLocation: fmt.Sprintf("m%d", i-1),
			NewMetadataLocation: fmt.Sprintf("m%d", i), NewMetadata: noise(3000 + i), NewFormatVersion: 2}}))
	}
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var size int
	require.NoError(t, conn.QueryRow(ctx, `SELECT length(metadata) FROM catalog_objects`).Scan(&size))
	require.Greater(t, size, 2100, "the test needs a value Postgres would TOAST by default")
	chunks := func() int {
		var toast string
		require.NoError(t, conn.QueryRow(ctx, `SELECT reltoastrelid::regclass::text FROM pg_class WHERE relname = 'catalog_objects'`).Scan(&toast))
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM `+toast).Scan(&n))
		return n
	}
	require.Zero(t, chunks(), "a %d-byte row stays inline", size)
	require.NoError(t, st.ObjectsSwap(ctx, []store.Swap{{ObjectID: o.ID, ExpectedMetadataLocation: "m5",
		NewMetadataLocation: "m6", NewMetadata: noise(20000), NewFormatVersion: 2}}))
	require.Positive(t, chunks(), "large metadata is still TOASTed")
}

// TestFunctionEventsMigration: migration 21 lets the event outbox hold
// function events, keeps every event, and on SQLite carries the
// AUTOINCREMENT counter over its table rebuild: after every event was
// pruned, the next one still gets a seq past the last one issued (a
// continuation-token may point there). Rolling back removes the function
// events only.
func TestFunctionEventsMigration(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var db *sql.DB
			var m *migrate.Migrate
			switch backend {
			case "sqlite":
				var err error
				db, err = sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "c.db")+"?_pragma=foreign_keys(1)")
				require.NoError(t, err)
				drv, err := migratesqlite.WithInstance(db, &migratesqlite.Config{})
				require.NoError(t, err)
				m = newMigrate(t, "sqlite", drv)
			case "postgres":
				cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
				require.NoError(t, err)
				db = stdlib.OpenDB(*cfg.ConnConfig)
				drv, err := migratepgx.WithInstance(db, &migratepgx.Config{})
				require.NoError(t, err)
				m = newMigrate(t, "pgx5", drv)
			}
			defer db.Close()
			insert := func(id, objectType string) (seq int64) {
				t.Helper()
				require.NoError(t, db.QueryRowContext(ctx, `INSERT INTO catalog_events (id, at, warehouse, namespace_key, object_type, operation, body)
					VALUES ($1, 0, 'wh', 'ns', $2, 'op', '{}') RETURNING seq`, id, objectType).Scan(&seq))
				return seq
			}
			count := func(where string) (n int) {
				t.Helper()
				require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM catalog_events WHERE `+where).Scan(&n))
				return n
			}
			require.NoError(t, m.Migrate(19))
			_, err := db.ExecContext(ctx, `INSERT INTO catalog_events (id, at, warehouse, namespace_key, object_type, operation, body)
				VALUES ('f0', 0, 'wh', 'ns', 'function', 'op', '{}')`)
			require.Error(t, err, "before 21 the outbox refuses a function event")
			insert("e1", "table")
			last := insert("e2", "view")
			_, err = db.ExecContext(ctx, `DELETE FROM catalog_events WHERE id = 'e2'`)
			require.NoError(t, err)

			require.NoError(t, m.Migrate(21))
			require.Equal(t, 1, count("id = 'e1'"), "events survive the migration")
			_, err = db.ExecContext(ctx, `DELETE FROM catalog_events`)
			require.NoError(t, err)
			f := insert("f1", "function")
			require.Greater(t, f, last, "no seq is issued twice")
			_, err = db.ExecContext(ctx, `INSERT INTO catalog_events (id, at, warehouse, namespace_key, object_type, operation, body)
				VALUES ('x', 0, 'wh', 'ns', 'column', 'op', '{}')`)
			require.Error(t, err, "the constraint still holds")

			insert("t1", "table")
			require.NoError(t, m.Migrate(19))
			require.Equal(t, 0, count("object_type = 'function'"))
			require.Equal(t, 1, count("id = 't1'"))
			require.Greater(t, insert("t2", "table"), f, "rolling back keeps the counter too")
		})
	}
}
