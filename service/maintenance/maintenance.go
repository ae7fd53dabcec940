// Package maintenance deletes the files a table no longer needs: snapshot
// expiry and the clean-up queue behind it, orphan-file removal, and the
// purge of a dropped table's files, each deciding from the one walk of
// package tablefiles what it may delete. It takes its dependencies as
// values (see Deps), commits through the function it is given and knows
// nothing of the catalog's orchestration (package service), which calls
// it.
package maintenance

import (
	"context"
	"log/slog"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tablefiles"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Deps are what a Maintainer works with.
type Deps struct {
	// Store holds the clean-up queue of expiries and the base-file index.
	Store store.Store
	// Authorize checks that the caller may write the metadata and the data
	// of table id in warehouse: its error (403, or 404 for a table the
	// caller may not see) is returned as is.
	Authorize func(ctx context.Context, warehouse string, id ident.Ident) error
	// Warehouse looks a warehouse up by name (404 when there is none).
	Warehouse func(ctx context.Context, name string) (*store.Warehouse, error)
	// LoadTable returns a table's row and its parsed metadata (404 when
	// the table does not exist).
	LoadTable func(ctx context.Context, warehouse string, id ident.Ident) (*store.Object, *tablemeta.Entry, error)
	// CommitExpiry commits remove-snapshots of expire on the table as meta
	// has it, requiring every ref to be where meta says (409 otherwise,
	// nothing expired), and returns the table as committed.
	CommitExpiry func(ctx context.Context, w *store.Warehouse, id ident.Ident, meta table.Metadata, expire []int64) (*Committed, error)
	// WarehouseDefaults returns props with, for each of keys props does
	// not set, w's value.
	WarehouseDefaults func(w *store.Warehouse, props map[string]string, keys ...string) map[string]string
	// Now is the catalog's clock (the database's).
	Now func() time.Time
	// Logger receives what a run did and what it left.
	Logger *slog.Logger
	// Files lists a table's location and opens Iceberg IO.
	Files *storage.Provider
	// Readers read v4 root and leaf manifests.
	Readers *v4read.Readers
	// FileIO returns the IO for loc of w (400 for a location outside the
	// warehouse).
	FileIO func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error)
	// IOProps returns the storage properties to open loc of w with (400
	// for a location outside the warehouse).
	IOProps func(ctx context.Context, w *store.Warehouse, loc string) (map[string]string, error)
	// TablePrefixes returns where a table at tableLoc may have files.
	TablePrefixes func(w *store.Warehouse, tableLoc string) location.Set
	// FileName names loc of w for logs and messages, relative to base when
	// inside it (never a whole path outside the warehouse).
	FileName func(w *store.Warehouse, base, loc string) string
	// TableFileName names loc for a report or message: relative to the
	// table at tableLoc when inside it.
	TableFileName func(tableLoc, loc string) string
}

// Committed is a table as an expiry's commit left it.
type Committed struct {
	Object           *store.Object
	Meta             table.Metadata
	MetadataLocation string
}

// Maintainer expires snapshots, removes orphan files and purges dropped
// tables' files. It holds no state of its own between calls and is safe
// for concurrent use.
type Maintainer struct {
	d Deps
}

// New returns a Maintainer over d.
func New(d Deps) *Maintainer {
	return &Maintainer{d: d}
}

// fileWalker completes wk with the catalog's storage: Iceberg IO for
// v1–v3 manifests and the v4 readers for roots and leaves of the table at
// tableLoc.
func (m *Maintainer) fileWalker(w *store.Warehouse, tableLoc string, wk tablefiles.Walker) tablefiles.Walker {
	wk.IcebergIO = func(ctx context.Context, loc string) (icebergio.IO, error) {
		props, err := m.d.IOProps(ctx, w, loc)
		if err != nil {
			return nil, err
		}
		return m.d.Files.IcebergIO(ctx, loc, props)
	}
	wk.ReadV4 = func(ctx context.Context, loc string, inherit *v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
		return m.d.Readers.Manifest(ctx, w, loc, tableLoc, inherit, nil)
	}
	wk.LegacyList = v4read.LegacyManifestList
	return wk
}
