// Package maintenance deletes the files a table no longer needs: snapshot
// expiry and the clean-up queue behind it, orphan-file removal, and the
// purge of a dropped table's files, each deciding from the one walk of
// package tablefiles what it may delete. It takes its dependencies as
// values (see Deps), commits an expiry through package tablecommit, a
// layer below, and knows nothing of the catalog's orchestration (package
// service), which calls it.
package maintenance

import (
	"context"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/service/tablefiles"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Deps are what a Maintainer works with.
type Deps struct {
	// Tables gives the store (the clean-up queue of expiries and the
	// base-file index), the warehouse lookup, the table loader, authorize,
	// file IO, the clock and the logger.
	Tables *tableaccess.Access
	// Readers read v4 root and leaf manifests.
	Readers *v4read.Readers
	// Commits commits an expiry's remove-snapshots (CommitExpiry).
	Commits *tablecommit.Committer
}

// authorizeWrite checks that the caller may write the metadata and the
// data of table id in warehouse: its error (403, or 404 for a table the
// caller may not see) is returned as is.
func (m *Maintainer) authorizeWrite(ctx context.Context, warehouse string, id ident.Ident) error {
	for _, p := range []access.Privilege{access.PrivTableWriteMetadata, access.PrivTableWriteData} {
		if err := m.d.Tables.AuthorizeTable(ctx, p, warehouse, id); err != nil {
			return err
		}
	}
	return nil
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
		props, err := m.d.Tables.IOProps(ctx, w, loc)
		if err != nil {
			return nil, err
		}
		return m.d.Tables.Files().IcebergIO(ctx, loc, props)
	}
	wk.ReadV4 = func(ctx context.Context, loc string, inherit *v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
		return m.d.Readers.Manifest(ctx, w, loc, tableLoc, inherit, nil)
	}
	wk.LegacyList = v4read.LegacyManifestList
	return wk
}
