// Package tablecommit is the commit path of tables written through the
// REST commit route (updateTable and the multi-table transaction), for
// format versions 1 to 4: it parses a change, checks its requirements,
// applies its updates, encodes the new metadata (by the fast path when the
// format stays), checks that it will load back, writes the metadata file
// and hands the swap and the jobs it enqueues to the commit engine.
//
// The metadata files themselves (their names, their writes, the clean-up
// of those no commit references and of those a commit drops from the log)
// live here too: views and v4 snapshot commits write theirs through the
// same functions, so that every commit names and writes files one way.
//
// It takes the store, the commit engine, an authorizer, a table loader,
// file IO, the location policy and the v4 upgrade as values (Deps); it
// never sees the service.
package tablecommit

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// Deps are what table commits need from the catalog, as values.
type Deps struct {
	// Store holds the tables: the existence check and row of a create by
	// commit, and the swap a commit prepares.
	Store store.Store
	// Engine runs every commit's attempts (retries, clock guard, outcome).
	Engine *commitengine.Engine
	// Authorize checks that the caller in ctx holds priv on r: nil when it
	// does, a refusal when it does not, any other error when it cannot
	// tell.
	Authorize func(ctx context.Context, priv access.Privilege, r access.Resource) error
	// Warehouse returns the named warehouse, or its 404 (or the store's
	// error).
	Warehouse func(ctx context.Context, name string) (*store.Warehouse, error)
	// ReadTable loads a table's row and parsed metadata, or its 404.
	ReadTable func(ctx context.Context, warehouse string, id ident.Ident) (*store.Object, *tablemeta.Entry, error)
	// FileIO opens the storage of loc in w: 400 for a location outside the
	// warehouse.
	FileIO func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error)
	// CacheMeta keeps a landed commit's parsed metadata for the next load.
	CacheMeta func(loc string, e *tablemeta.Entry)
	// PolicyJobs are the scheduled-policy jobs a commit enqueues
	// (upkeep.Upkeep.PolicyJobs).
	PolicyJobs func(w *store.Warehouse, id ident.Ident, meta table.Metadata) []store.Job
	// ClockGuard refuses commits (503) while this process's clock is off
	// the database's.
	ClockGuard func() error

	// GuardV4 refuses (400) to answer a caller that does not read format
	// version 4 with v4 metadata; what names the operation.
	GuardV4 func(ctx context.Context, version int, what string) error
	// WantsV4Upgrade reports whether a change's updates upgrade to format
	// version 4; such a single-table change goes to CommitV4Upgrade, which
	// returns what CommitTable does.
	WantsV4Upgrade  func(info []tablemeta.UpdateInfo) bool
	CommitV4Upgrade func(ctx context.Context, w *store.Warehouse, c *Change) (*Result, error)

	// The location policy: CheckTableMetadataLocations,
	// CheckObjectLocation and CheckWritePaths return 400s for locations
	// outside the allowed prefixes; DefaultLocation places a new table;
	// TablePrefixes are where a table may have files; FileName names a
	// file for messages without leaking paths outside the warehouse.
	CheckTableMetadataLocations func(w *store.Warehouse, meta table.Metadata) error
	CheckObjectLocation         func(w *store.Warehouse, loc string) (string, error)
	CheckWritePaths             func(w *store.Warehouse, tableLoc string, props map[string]string) error
	DefaultLocation             func(w *store.Warehouse, ns *store.Namespace, name string) string
	TablePrefixes               func(w *store.Warehouse, tableLoc string) location.Set
	FileName                    func(w *store.Warehouse, base, loc string) string

	// AddEvent adds to an attempt, and WithEvent to ctx, the event build
	// makes, when events are on; TableObject and Who name what changed and
	// who changed it.
	AddEvent    func(a *commitengine.Attempt, build func() store.Event)
	WithEvent   func(ctx context.Context, build func() store.Event) context.Context
	TableObject func(warehouse string, id ident.Ident, meta table.Metadata) changeevents.Object
	Who         func(ctx context.Context) changeevents.Who
	// PutErr maps the errors of creating an object under a name (taken,
	// missing namespace, overlapping location).
	PutErr func(err error, kind store.ObjectKind, id ident.Ident, warehouse string) error

	// MaxClockSkew is how far ahead of Now a committed snapshot may be
	// dated.
	MaxClockSkew time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
}

// Committer commits table changes.
type Committer struct {
	d Deps
}

// New returns the table committer over d.
func New(d Deps) *Committer {
	return &Committer{d: d}
}

// Result is a committed table's metadata document and its location, and
// the caution the HTTP layer sends with it (the v4 upgrade's), if any.
type Result struct {
	MetadataLocation string
	Metadata         []byte
	Warning          string
}

// TableChange is one table's requirements and updates, as sent in
// CommitTableRequest (the identifier comes from the path, or from the body
// inside a multi-table transaction).
type TableChange struct {
	Ident        ident.Ident
	Requirements json.RawMessage
	Updates      json.RawMessage
}

// Bounds on one commit. Engines send a handful of updates per commit (a
// create transaction a dozen); the bounds stop a body from making the
// server apply and validate millions of them.
const (
	MaxCommitUpdates      = 1000
	MaxCommitRequirements = 100
	MaxTransactionTables  = 100
)
