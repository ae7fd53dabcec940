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
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Deps are what a Committer needs of the catalog, as values.
type Deps struct {
	Store   store.Store
	Engine  *commitengine.Engine // the commit loop every commit runs through
	Readers *v4read.Readers      // v4 manifests and their caches
	Logger  *slog.Logger
	// Now is the catalog's clock: snapshot timestamps.
	Now func() time.Time
	// MaxLeafEntries bounds the rows of a leaf manifest written for added
	// files.
	MaxLeafEntries int

	// WriteTarget authorizes table-write-data on id and returns its
	// warehouse: 403 when denied, 404 for an unknown warehouse.
	WriteTarget func(ctx context.Context, warehouse string, id ident.Ident) (*store.Warehouse, error)
	// AuthorizeRead authorizes table-read-data on id (403, or 404 hiding
	// what the caller may not see).
	AuthorizeRead func(ctx context.Context, warehouse string, id ident.Ident) error
	// Warehouse looks a warehouse up: 404 when unknown.
	Warehouse func(ctx context.Context, name string) (*store.Warehouse, error)
	// ReadTable loads a table's row and its parsed (cached) metadata: 404
	// when the table does not exist.
	ReadTable func(ctx context.Context, warehouse string, id ident.Ident) (*store.Object, *tablemeta.Entry, error)
	// CacheMeta adds a committed metadata file's parsed entry to the cache.
	CacheMeta func(metaLoc string, e *tablemeta.Entry)
	// Encode serialises meta, built from prev, as format target (the
	// fast path when it can): 500 when it cannot be encoded.
	Encode func(prev *tablemeta.Entry, meta table.Metadata, target int) (*Encoded, error)

	// FileIO opens the storage of loc in w.
	FileIO func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error)
	// WriteFile writes a file the catalog creates (manifests, compacted
	// files): its errors are faults (503 when storage is unavailable).
	WriteFile func(ctx context.Context, w *store.Warehouse, loc string, data []byte) error
	// WriteNextMetadata writes obj's next metadata file and returns its
	// location and the object's new base location ("" when unchanged).
	WriteNextMetadata func(ctx context.Context, w *store.Warehouse, obj *store.Object, loc string, props map[string]string, data []byte) (metaLoc, newLoc string, err error)
	// CommitJobs are the follow-up jobs of a commit that moves a table
	// from base to meta.
	CommitJobs func(w *store.Warehouse, id ident.Ident, base, meta table.Metadata, metaLoc string) []store.Job

	// AddEvent adds the event build makes to an attempt when events are
	// on; TableObject and Who name the table and the caller in it.
	AddEvent    func(a *commitengine.Attempt, build func() store.Event)
	TableObject func(warehouse string, id ident.Ident, meta table.Metadata) changeevents.Object
	Who         func(ctx context.Context) changeevents.Who

	// FileName names loc for messages (never a server path);
	// CheckFileInTable is the 400 for a file outside the table's prefixes;
	// TablePrefixes are where a table may have files.
	FileName         func(w *store.Warehouse, base, loc string) string
	CheckFileInTable func(w *store.Warehouse, tableLoc, loc, what string) error
	TablePrefixes    func(w *store.Warehouse, tableLoc string) location.Set
	// WithWarehouseDefaults is props with the warehouse's values for the
	// keys the table does not set; DataLocation is where the catalog
	// writes a table's new data files.
	WithWarehouseDefaults func(w *store.Warehouse, props map[string]string, keys ...string) map[string]string
	DataLocation          func(tableLoc string, props map[string]string) string
}

// Encoded is a commit's new metadata document, its refs-only form, its
// cache entry (nil when it was encoded the slow way) and the check it must
// pass before it may be committed.
type Encoded struct {
	Data, Refs []byte
	Entry      *tablemeta.Entry
	Check      func() error
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
	return &Committer{d: d, store: d.Store, engine: d.Engine, readers: d.Readers, log: d.Logger}
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
