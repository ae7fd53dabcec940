package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
)

// TestMigrationForgetsIndexedLeaves: migration 22 drops every leaf row
// of the base-file index (lineages indexed before it list no column
// files, so the next commit rebuilds them) and keeps the file rows, which
// a leaf indexed by a replica still on the previous version may continue.
func TestMigrationForgetsIndexedLeaves(t *testing.T) {
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
			require.NoError(t, m.Migrate(19))
			for _, q := range []string{
				`INSERT INTO file_index_leaves (table_id, leaf, lineage) VALUES ('o', 'L1', 'A'), ('o', 'L2', 'B')`,
				`INSERT INTO file_index (table_id, location, lineage) VALUES ('o', 'f1', 'A'), ('o', 'f2', 'B')`,
			} {
				_, err := db.ExecContext(ctx, q)
				require.NoError(t, err)
			}
			require.NoError(t, m.Migrate(22))
			var leaves, files int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM file_index_leaves`).Scan(&leaves))
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM file_index`).Scan(&files))
			require.Equal(t, 0, leaves, "every leaf is indexed again, column files included")
			require.Equal(t, 2, files, "the file rows stay")
		})
	}
}
