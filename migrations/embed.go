// Package migrations embeds the schema migrations (golang-migrate format).
// The SQL files in this directory are portable and migrate Postgres and the
// embedded SQLite file alike; a file of the same name under postgres/
// replaces the shared one for Postgres only (storage tuning SQLite has no
// syntax for, or an index SQLite does not need; the shared file is then a
// no-op). Every version exists in
// this directory, so both databases pass through the same version numbers.
package migrations

import (
	"embed"
	"io/fs"
)

// FS holds every shared *.sql migration, numbered so that lexical order is
// numeric, and the Postgres replacements in postgres/.
//
//go:embed *.sql postgres/*.sql
var FS embed.FS

// For returns the migrations of one database ("postgres" or "sqlite"):
// the shared files, each replaced by the database's own file of the same
// name when there is one (only postgres/ has any).
func For(database string) fs.FS {
	sub, err := fs.Sub(FS, database)
	if err != nil {
		return FS
	}
	return overlay{base: FS, over: sub}
}

// overlay serves the base directory listing and, for each file, the
// override when it exists.
type overlay struct{ base, over fs.FS }

func (o overlay) Open(name string) (fs.File, error) {
	if name != "." {
		if f, err := o.over.Open(name); err == nil {
			return f, nil
		}
	}
	return o.base.Open(name)
}

// ReadDir lists the shared directory: overrides only replace its files.
func (o overlay) ReadDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(o.base, name)
}
