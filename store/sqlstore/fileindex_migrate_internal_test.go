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
	"github.com/lakehold/catalog/store"
)

// TestMigrationForgetsIndexedLeaves: migration 22 drops every leaf row
// of the base-file index (lineages indexed before it list no column
// files, so the next commit rebuilds them) and keeps the file rows, which
// a leaf indexed by a replica still on the previous version may continue;
// such a leaf's row, inserted as that version does, gets colfiles = 0.
// Down, the column goes and the rows stay.
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

			_, err := db.ExecContext(ctx, `INSERT INTO file_index_leaves (table_id, leaf, lineage) VALUES ('o', 'L3', 'A')`)
			require.NoError(t, err, "the previous version's insert")
			var colfiles int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT colfiles FROM file_index_leaves WHERE leaf = 'L3'`).Scan(&colfiles))
			require.Equal(t, 0, colfiles, "a row of the previous version is not trusted")

			require.NoError(t, m.Migrate(21))
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM file_index_leaves`).Scan(&leaves))
			require.Equal(t, 1, leaves, "down keeps the rows")
			_, err = db.ExecContext(ctx, `SELECT colfiles FROM file_index_leaves`)
			require.Error(t, err, "down drops the column")
		})
	}
}

// TestFileIndexDistrustsPreviousVersion: a leaf row written as a replica
// on the version before migration 22 writes it (colfiles = 0, file rows
// of data files only) is not reported as indexed; FileIndexAdd replaces
// it with the new lineage and its files, and a second FileIndexAdd (a
// concurrent rebuild) then leaves the trusted row as it is.
func TestFileIndexDistrustsPreviousVersion(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st := openBackend(t, backend)
			require.NoError(t, st.FileIndexAddAsPrevious(ctx, "o", []store.IndexedLeaf{
				{Leaf: "L1", Lineage: "old", Locations: []string{"d1"}},
			}))
			got, err := st.FileIndexLeaves(ctx, "o", []string{"L1"})
			require.NoError(t, err)
			require.Empty(t, got, "a leaf the previous version indexed is not trusted")

			require.NoError(t, st.FileIndexAdd(ctx, "o", []store.IndexedLeaf{
				{Leaf: "L1", Lineage: "new", Locations: []string{"d1", "c1"}},
			}))
			require.NoError(t, st.FileIndexAdd(ctx, "o", []store.IndexedLeaf{
				{Leaf: "L1", Lineage: "late", Locations: []string{"d1", "c1"}},
			}))
			got, err = st.FileIndexLeaves(ctx, "o", []string{"L1"})
			require.NoError(t, err)
			require.Equal(t, map[string]string{"L1": "new"}, got)
			entries, err := st.FileIndexLookup(ctx, "o", []string{"c1"})
			require.NoError(t, err)
			require.Equal(t, []store.IndexEntry{{Location: "c1", Lineage: "new"}}, entries, "the column file is found through the rebuilt lineage")
		})
	}
}
