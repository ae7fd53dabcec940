package migrations

import (
	"io/fs"
	"strings"
	"testing"
)

// TestForOverlaysPostgres: Postgres gets its own file where one exists and
// the shared file otherwise; both databases list the same versions; every
// replacement replaces a shared file (a version only one database had would
// leave the other's schema version behind).
func TestForOverlaysPostgres(t *testing.T) {
	shared, err := fs.ReadDir(FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	own, err := fs.ReadDir(FS, "postgres")
	if err != nil || len(own) == 0 {
		t.Fatalf("no Postgres replacements: %v", err)
	}
	for _, db := range []string{"postgres", "sqlite"} {
		listed, err := fs.ReadDir(For(db), ".")
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != len(shared) {
			t.Fatalf("%s lists %d entries, the shared directory %d", db, len(listed), len(shared))
		}
	}
	for _, e := range own {
		base, err := fs.ReadFile(FS, e.Name())
		if err != nil {
			t.Fatalf("postgres/%s replaces no shared file", e.Name())
		}
		pg, err := fs.ReadFile(For("postgres"), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := fs.ReadFile(FS, "postgres/"+e.Name())
		if string(pg) != string(want) || string(pg) == string(base) {
			t.Fatalf("%s: Postgres does not get its own file", e.Name())
		}
		lite, err := fs.ReadFile(For("sqlite"), e.Name())
		if err != nil || string(lite) != string(base) {
			t.Fatalf("%s: SQLite does not get the shared file", e.Name())
		}
	}
	for _, e := range shared {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".sql") {
			t.Fatalf("unexpected file %s", e.Name())
		}
	}
}
