// Package v4commits commits the snapshots of format-version-4 tables: it
// validates a files, column-files or compaction commit, lets
// internal/v4commit rewrite the manifest tree, writes the leaves, the root
// and the metadata file and stages the swap for the commit engine. It also
// plans and runs compaction. It takes its dependencies as values (Deps),
// never the orchestration that wires it.
package v4commits

import (
	"context"
	"log/slog"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Deps are what a Committer needs of the catalog, as values.
type Deps struct {
	// Tables gives the store, the warehouse lookup, the table loader and
	// its cache, authorize, file IO and metadata files, the event
	// builders, the clock and the logger.
	Tables  *tableaccess.Access
	Engine  *commitengine.Engine // the commit loop every commit runs through
	Readers *v4read.Readers      // v4 manifests and their caches
	// MaxLeafEntries bounds the rows of a leaf manifest written for added
	// files.
	MaxLeafEntries int
}

// writeTarget authorizes table-write-data on id and returns its
// warehouse: 403 when denied, 404 for an unknown warehouse.
func (cm *Committer) writeTarget(ctx context.Context, warehouse string, id ident.Ident) (*store.Warehouse, error) {
	return cm.d.Tables.WriteTarget(ctx, warehouse, id, access.PrivTableWriteData)
}

// authorizeRead authorizes table-read-data on id (403, or 404 hiding
// what the caller may not see).
func (cm *Committer) authorizeRead(ctx context.Context, warehouse string, id ident.Ident) error {
	return cm.d.Tables.AuthorizeTable(ctx, access.PrivTableReadData, warehouse, id)
}

// Result is a committed table's new metadata location and document.
type Result struct {
	MetadataLocation string
	Metadata         []byte
}

// Committer commits v4 snapshots and runs compaction.
type Committer struct {
	d       Deps
	store   store.Store
	engine  *commitengine.Engine
	readers *v4read.Readers
	log     *slog.Logger
}

// New returns a Committer over d.
func New(d Deps) *Committer {
	return &Committer{d: d, store: d.Tables.Store(), engine: d.Engine, readers: d.Readers, log: d.Tables.Logger()}
}

// NewState is a loaded v4 table from its row and parsed metadata (the
// current snapshot's root rows not read).
func NewState(obj *store.Object, entry *tablemeta.Entry) *State {
	return &State{obj: obj, entry: entry, meta: entry.Meta, location: entry.Meta.Location()}
}

// Entry is the table's parsed metadata.
func (st *State) Entry() *tablemeta.Entry { return st.entry }

// Metadata is the table's metadata.
func (st *State) Metadata() table.Metadata { return st.meta }

// Location is the table's location.
func (st *State) Location() string { return st.location }

// RootRows are the root manifest rows of the snapshot loaded.
func (st *State) RootRows() []v4manifest.TrackedFile { return st.rootRows }

// TreeTotals counts the totals of st's current tree, reading every live
// leaf narrowly (what a parent snapshot without totals gets). Its errors
// are the leaf reads'.
func (cm *Committer) TreeTotals(ctx context.Context, w *store.Warehouse, st *State) (map[string]int64, error) {
	return cm.treeTotals(ctx, &Tx{cm: cm, w: w, st: st})
}

// Err is the failure behind Error (nil when the base was folded).
func (f FoldReport) Err() error { return f.err }
