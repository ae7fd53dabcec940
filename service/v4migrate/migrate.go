// Package v4migrate moves tables across the format-version-4 line, both
// ways: the upgrade of a v1–v3 table in place (its current snapshot's Avro
// manifests become a v4 manifest tree in the commit that sets the format
// version) and the export of a v4 table's current snapshot into a new
// v1–v3 table. Both are conversions between the two manifest formats,
// which is why they share a room; v4 commits themselves live in
// v4commits.
//
// It takes the store, the v4 committer and readers, the commit loop, the
// create checks, storage and the event builders as values (Deps): the
// parsing of commits and the plain (non-upgrading) commit path stay with
// the service.
package v4migrate

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
)

// Deps are what the upgrade and the export need from the catalog, as
// values.
type Deps struct {
	Store store.Store
	// V4 stages the upgraded snapshot and loads the snapshot exported.
	V4 *v4commits.Committer
	// Readers read the exported snapshot's leaf manifests.
	Readers *v4read.Readers
	// MaxLeafEntries bounds the rows of a converted leaf manifest.
	MaxLeafEntries int
	// ReadTable loads a table's row and parsed metadata, or its 404.
	ReadTable func(ctx context.Context, warehouse string, id ident.Ident) (*store.Object, *tablemeta.Entry, error)
	// ManifestIO opens the Avro manifests of the table at tableLoc in w,
	// refusing files outside it (planning.Planner.IO).
	ManifestIO func(w *store.Warehouse, tableLoc string) table.FSysF
	// RunCommit runs stage through the commit loop; DropUnlanded deletes
	// the files of a write that failed with err unless it may have landed.
	RunCommit    func(ctx context.Context, w *store.Warehouse, subject string, stage commitengine.Stage) error
	DropUnlanded func(ctx context.Context, w *store.Warehouse, err error, files ...string)

	// CreateTarget checks a new object's identifier, authorizes priv on
	// its namespace and returns the warehouse and namespace: 404 when the
	// namespace is missing (or hidden), 403 when denied.
	CreateTarget func(ctx context.Context, warehouse string, id ident.Ident, priv access.Privilege) (*store.Warehouse, *store.Namespace, error)
	// CheckVend refuses, before any work, a delegation that cannot be
	// served; Grant is the config and credentials of a table's result.
	CheckVend func(ctx context.Context, w *store.Warehouse, id ident.Ident, deleg storageaccess.Delegation) error
	Grant     func(ctx context.Context, w *store.Warehouse, id ident.Ident, metaLoc string, data []byte, location string,
		deleg storageaccess.Delegation) (map[string]string, []credentials.StorageCredential, error)
	// Compact runs a v4 table's compaction, authorized as any request.
	Compact func(ctx context.Context, warehouse string, id ident.Ident, opt v4commits.CompactOptions) (*v4commits.CompactionReport, error)
	// CheckNewMetadata validates a metadata document before it is written.
	CheckNewMetadata func(prev, next table.Metadata, data []byte) error
	// NewMetadataLocation names the first metadata file of a table at loc.
	NewMetadataLocation func(loc string, props map[string]string, previous string) string
	// FileIO opens the storage of loc in w; WriteFile writes a file the
	// catalog creates (503 when storage is unavailable).
	FileIO    func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error)
	WriteFile func(ctx context.Context, w *store.Warehouse, loc string, data []byte) error

	// AlreadyExists is the 409 of a name taken (err, when not nil, says by
	// what kind); PutErr maps the errors of creating an object.
	AlreadyExists func(err error, kind store.ObjectKind, id ident.Ident) error
	PutErr        func(err error, kind store.ObjectKind, id ident.Ident, warehouse string) error
	// AddEvent adds an event to a commit attempt and WithEvent to a
	// store change's context, when events are on; the rest build them.
	AddEvent    func(a *commitengine.Attempt, build func() store.Event)
	WithEvent   func(ctx context.Context, build func() store.Event) context.Context
	Who         func(ctx context.Context) changeevents.Who
	TableObject func(warehouse string, id ident.Ident, meta table.Metadata) changeevents.Object
	DocObject   func(warehouse string, id ident.Ident, kind store.ObjectKind, doc []byte) changeevents.Object
	Now         func() time.Time
}

// Migrator upgrades tables to format version 4 and exports v4 tables.
type Migrator struct {
	d Deps
}

// New returns the upgrade and export over d.
func New(d Deps) *Migrator {
	return &Migrator{d: d}
}

// Result is a table as an upgrade or an export leaves it: its metadata
// file and, for an export, the storage access its caller asked for.
type Result struct {
	MetadataLocation   string
	Metadata           []byte
	Config             map[string]string
	StorageCredentials []credentials.StorageCredential
}

// v4Result is the Result of a v4 commit's result.
func v4Result(r *v4commits.Result, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return &Result{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}}, nil
}
