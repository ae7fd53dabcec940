package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakehold/catalog/store"
)

// checkDataDirMoved returns an error naming the remedy when the embedded
// default warehouse was created under another data directory, i.e. the
// data directory was moved or copied. Table metadata files hold absolute
// file:// locations under the old directory (and engines such as PyIceberg
// read them as written), so moving the warehouse's row alone would leave
// every table pointing at the old place: the catalog refuses to start
// rather than serve tables it cannot read. It returns nil when the
// warehouse does not exist yet or lives where it should, and the store's
// error when it cannot be read.
func checkDataDirMoved(ctx context.Context, st store.Store, sf storageFlags) error {
	if !sf.embedded() {
		return nil
	}
	w, err := st.WarehouseGet(ctx, "default")
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	here, err := filepath.Abs(sf.dataDir)
	if err != nil {
		return err
	}
	u, err := url.Parse(w.Location)
	if err != nil || u.Scheme != "file" {
		return nil // not the embedded layout: Ensure reports any mismatch
	}
	stored := filepath.Clean(u.Path)
	if stored == filepath.Join(here, "warehouse") || filepath.Base(stored) != "warehouse" {
		return nil
	}
	old := filepath.Dir(stored)
	move := fmt.Sprintf("mv %s %s && catalog serve --data-dir %s", shellQuote(here), shellQuote(old), shellQuote(old))
	if _, err := os.Stat(stored); err == nil {
		move = fmt.Sprintf("catalog serve --data-dir %s", shellQuote(old))
	}
	return fmt.Errorf("the data directory %s was created as %s: its tables' metadata holds absolute file:// paths "+
		"under %s, so it cannot be served from a new place; serve it where it was created: %s", here, old, old, move)
}

// shellQuote quotes a path for a command line when it needs it.
func shellQuote(p string) string {
	if strings.ContainsAny(p, " \t'\"$\\`*?[]{}()<>|&;!#~") {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return p
}
