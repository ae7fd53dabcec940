// Package store declares the catalog's persistent state: warehouses,
// namespaces, tables and views (one name space per namespace) and
// idempotency records. The interface hides the database driver; the
// implementation in store/sqlstore serves both Postgres (pgx v5) and the
// embedded SQLite file. Every method takes the context of the request.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Implementations wrap them with detail; callers test with
// errors.Is.
var (
	// ErrNotFound is returned when the addressed warehouse, namespace, table
	// or view does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists is returned when a create or rename target name is
	// taken. Use AlreadyExistsError to learn which kind holds the name.
	ErrAlreadyExists = errors.New("already exists")
	// ErrNotEmpty is returned when a namespace to drop still holds tables,
	// views or child namespaces, or a warehouse still holds namespaces.
	ErrNotEmpty = errors.New("not empty")
	// ErrConflict is returned when a compare-and-swap lost: the metadata
	// pointer moved since it was read. Nothing was written.
	ErrConflict = errors.New("concurrent modification")
	// ErrLocationOverlap is returned when a table or view location is inside,
	// or contains, another table's or view's location in the same warehouse.
	ErrLocationOverlap = errors.New("location overlaps another table or view")
	// ErrOwnNameFree is returned when an undrop asks for a new name while
	// the object's own name is free: a new name is only for a taken one.
	ErrOwnNameFree = errors.New("the object's own name is free")
	// ErrNoSuchWarehouse is returned when the named warehouse is missing.
	ErrNoSuchWarehouse = fmt.Errorf("%w: warehouse", ErrNotFound)
	// ErrNoSuchNamespace is returned when the namespace (or a destination or
	// parent namespace) is missing.
	ErrNoSuchNamespace = fmt.Errorf("%w: namespace", ErrNotFound)
	// ErrNoSuchTable is returned when the table is missing.
	ErrNoSuchTable = fmt.Errorf("%w: table", ErrNotFound)
	// ErrNoSuchView is returned when the view is missing.
	ErrNoSuchView = fmt.Errorf("%w: view", ErrNotFound)
	// ErrNoSuchFunction is returned when the function is missing.
	ErrNoSuchFunction = fmt.Errorf("%w: function", ErrNotFound)
	// ErrInvalidPageToken is returned when a page token was not issued by us.
	ErrInvalidPageToken = errors.New("invalid page token")
	// ErrOutcomeUnknown is returned when the database connection failed while
	// a transaction was committing: it may or may not have landed.
	ErrOutcomeUnknown = errors.New("commit outcome unknown")
	// ErrUnavailable is returned when the database could not be reached or
	// refused to work before anything was committed: connection refused or
	// reset, no pooled connection within the acquire timeout, the server
	// shutting down or starting up, a SQLite file still locked after its
	// busy timeout, or a transaction that kept losing races. Nothing was
	// written; the same call may succeed later.
	ErrUnavailable = errors.New("catalog database unavailable")
	// ErrInvalidValue is returned when the database refused a value it
	// cannot store (a NUL byte, invalid UTF-8, a key too long for an index).
	// Callers validate names first; this is the safety net.
	ErrInvalidValue = errors.New("value not accepted by the catalog database")
	// ErrDatabase is returned for any other database failure. The driver's
	// own text is not part of the message (it can name hosts, users and
	// SQL); only its error code is.
	ErrDatabase = errors.New("catalog database error")
	// ErrNotHeld is returned when an Idempotency-Key is no longer held by
	// the caller: its lease ran out and a retry claimed it, or it finished.
	// A transaction fenced by the key (WithIdempotencyFence) wrote nothing.
	ErrNotHeld = errors.New("idempotency key no longer held by this request")
)

// AlreadyExistsError says which kind of object holds a name.
type AlreadyExistsError struct {
	Kind ObjectKind // KindTable or KindView; empty for namespaces and warehouses
	Name string
}

func (e *AlreadyExistsError) Error() string { return string(e.Kind) + " " + e.Name + " already exists" }

// Unwrap makes errors.Is(err, ErrAlreadyExists) hold.
func (e *AlreadyExistsError) Unwrap() error { return ErrAlreadyExists }

// ObjectKind tells tables, views and functions apart; all live in one
// name space per namespace.
type ObjectKind string

// The kinds of catalog objects.
const (
	KindTable ObjectKind = "table"
	KindView  ObjectKind = "view"
	// KindFunction is a SQL UDF (the UDF spec's metadata document); it has
	// no files of its own but its metadata file.
	KindFunction ObjectKind = "function"
)

// Warehouse is a named storage root; its name is the REST prefix.
type Warehouse struct {
	ID         string
	Name       string
	Location   string // file://..., s3://bucket/..., gs://bucket/...
	Properties map[string]string
	// StorageProfile is the JSON storage profile ("" when none); its secrets
	// are sealed by the caller before they reach the store.
	StorageProfile string
	CreatedAt      time.Time
}

// Namespace is one namespace of a warehouse. Levels is never empty.
type Namespace struct {
	ID          string
	WarehouseID string
	Levels      []string
	Properties  map[string]string
}

// Object is a table or a view with its current metadata pointer. Metadata
// holds the JSON of the metadata file at MetadataLocation, cached so that a
// load needs no object-store read.
type Object struct {
	ID               string
	Warehouse        string // warehouse name
	WarehouseID      string
	NamespaceID      string
	Namespace        []string
	Name             string
	Kind             ObjectKind
	Location         string // table or view base location, without trailing slash
	MetadataLocation string
	Metadata         []byte
	// RefsMetadata, given to ObjectCreate and ObjectReplace, is the document
	// a snapshots=refs load serves: Metadata without the snapshots no
	// branch or tag points at. nil when the writer did not derive it (such
	// loads then filter Metadata); equal to Metadata when there is nothing
	// to drop, which costs no extra space. Reads leave it nil.
	RefsMetadata []byte
	// RefsOnly is set by ObjectGetRefs when Metadata holds the stored
	// refs-only document rather than the full one.
	RefsOnly      bool
	FormatVersion int
	UpdatedAt     time.Time
}

// ObjectRef addresses a table or view by names.
type ObjectRef struct {
	Warehouse string
	Namespace []string
	Name      string
	Kind      ObjectKind
}

// Ref returns the address of o.
func (o *Object) Ref() ObjectRef {
	return ObjectRef{Warehouse: o.Warehouse, Namespace: o.Namespace, Name: o.Name, Kind: o.Kind}
}

// String prints the identifier as Iceberg does in messages: levels and name
// joined by dots.
func (r ObjectRef) String() string {
	return strings.Join(append(append([]string{}, r.Namespace...), r.Name), ".")
}

// Swap is one compare-and-swap of an object's metadata pointer: it lands only
// if the stored pointer still equals ExpectedMetadataLocation.
type Swap struct {
	ObjectID                 string
	ExpectedMetadataLocation string
	NewMetadataLocation      string
	NewMetadata              []byte
	// NewRefsMetadata is the refs-only form of NewMetadata, as in
	// Object.RefsMetadata; nil clears what the previous version stored.
	NewRefsMetadata  []byte
	NewFormatVersion int
	// NewLocation is set when the commit changed the object's base location;
	// the overlap rule is then checked in the same transaction.
	NewLocation string
	// Index lists the data leaves the commit wrote, indexed in the same
	// transaction (FileIndex): a swap that does not land leaves no entries.
	// The leaves must be new (not indexed yet) and their new lineages too.
	Index []IndexedLeaf
	// Adds lists the files the commit makes the table reference that it
	// did not before (data, delete, column and deletion-vector files,
	// manifests, manifest lists, statistics), normalized; AddsListed says
	// the list is complete (a commit that adds none sets it with no Adds).
	// While the table has orphan-file rows (a removal's candidates, or
	// tombstones of files it deleted), a swap lands only when AddsListed
	// and no listed file has a row (ErrOrphanHold otherwise). The list
	// may be a superset (files the table already references never have a
	// tombstone).
	Adds       []string
	AddsListed bool
	// Packed is the stored form of NewMetadata and NewRefsMetadata, set by
	// Store.PrepareSwap; nil until then. Callers do not set it themselves.
	Packed *PackedMetadata
}

// PackedMetadata is a swap's documents as the store keeps them (compressed).
type PackedMetadata struct {
	Metadata, Refs []byte
}

// Page asks for one page of a listing. Token is the opaque value a previous
// page returned; Size 0 means no limit.
type Page struct {
	Token string
	Size  int
	// Visible, when set, keeps only the names its assignees may see (RBAC).
	Visible *Visibility
}

// IdempotencyClaim asks to hold an Idempotency-Key while a request runs.
type IdempotencyClaim struct {
	Key string
	// Operation is the method and path the key was first used with.
	Operation string
	// Fingerprint is a hash of the whole request (method, path, query,
	// body); a key reused with another fingerprint is a client error.
	Fingerprint string
	// Owner is a random token of this claim: only its holder may renew,
	// finish or abandon the key.
	Owner string
	// Lease is how long the claim holds without renewal: a holder that died
	// stops blocking retries once it runs out.
	Lease time.Duration
	// TTL is how long outcomes are kept; older records count as absent.
	TTL time.Duration
}

// IdempotencyRecord is the stored state of a key: in flight (Done false,
// held by Owner until LeaseUntil) or the final outcome of its request.
type IdempotencyRecord struct {
	Key         string
	Operation   string
	Fingerprint string
	Owner       string
	Done        bool
	Status      int
	Headers     map[string]string
	Body        []byte
	CreatedAt   time.Time
	LeaseUntil  time.Time
	// Mutated is set, in the same transaction, by every change the holder
	// committed under WithIdempotencyFence. A record that is Mutated but not
	// Done lost its response: running the request again would repeat the
	// change.
	Mutated bool
}

type fenceKey struct{}

type fence struct{ key, owner string }

// WithIdempotencyFence returns a context under which the store ties every
// transaction that changes catalog state to a held Idempotency-Key: inside
// that transaction it checks that owner still holds key (ErrNotHeld
// otherwise, and nothing is written) and marks the key Mutated. A request
// whose lease ran out and whose key a retry took over can then no longer
// commit too.
func WithIdempotencyFence(ctx context.Context, key, owner string) context.Context {
	return context.WithValue(ctx, fenceKey{}, fence{key, owner})
}

// IdempotencyFence returns the key and owner WithIdempotencyFence put in
// ctx; ok is false when there is none.
func IdempotencyFence(ctx context.Context) (key, owner string, ok bool) {
	f, ok := ctx.Value(fenceKey{}).(fence)
	return f.key, f.owner, ok
}

// Store is the catalog's persistence. Implementations must be safe for
// concurrent use by many server replicas: correctness never depends on
// in-process locks.
type Store interface {
	Principals
	RBACStore
	AuditStore
	PendingDeletes
	FileIndex
	Jobs
	Events
	Reports
	DeletedObjects
	OrphanCandidates
	// WarehouseCreate inserts w (ID and CreatedAt are filled in).
	// ErrAlreadyExists when the name is taken.
	WarehouseCreate(ctx context.Context, w *Warehouse) error
	// WarehouseGet returns the named warehouse, or ErrNotFound.
	WarehouseGet(ctx context.Context, name string) (*Warehouse, error)
	// WarehouseList returns every warehouse ordered by name.
	WarehouseList(ctx context.Context) ([]*Warehouse, error)
	// WarehouseSetProfile replaces a warehouse's storage profile; ErrNotFound
	// when the warehouse is missing.
	WarehouseSetProfile(ctx context.Context, name, profile string) error
	// WarehouseDelete removes an empty warehouse: ErrNotFound, or ErrNotEmpty
	// when it still holds namespaces.
	WarehouseDelete(ctx context.Context, name string) error

	// NamespaceCreate inserts a namespace. ErrNotFound when the warehouse or
	// the parent namespace is missing, ErrAlreadyExists when it exists.
	NamespaceCreate(ctx context.Context, warehouse string, levels []string, props map[string]string) (*Namespace, error)
	// NamespaceGet returns a namespace or ErrNotFound.
	NamespaceGet(ctx context.Context, warehouse string, levels []string) (*Namespace, error)
	// NamespaceList returns the direct children of parent (top level when
	// parent is empty) ordered by name, and the token of the next page: ""
	// when no child follows this page, so that a full last page ends the
	// listing. ErrNotFound when parent is given and missing,
	// ErrInvalidPageToken for a token not issued by the store.
	NamespaceList(ctx context.Context, warehouse string, parent []string, page Page) ([][]string, string, error)
	// NamespaceUpdateProperties applies removals then updates in one
	// transaction and reports the removed keys and the missing ones.
	// ErrNotFound when the namespace is missing.
	NamespaceUpdateProperties(ctx context.Context, warehouse string, levels []string, removals []string, updates map[string]string) (removed, missing []string, err error)
	// NamespaceDelete drops an empty namespace: ErrNotFound, or ErrNotEmpty.
	NamespaceDelete(ctx context.Context, warehouse string, levels []string) error

	// ObjectGet returns a table or view (the kind in ref must match) with its
	// cached metadata. ErrNotFound when missing.
	ObjectGet(ctx context.Context, ref ObjectRef) (*Object, error)
	// ObjectGetRefs is ObjectGet for a load that serves only the snapshots
	// branches and tags point at: Metadata is the refs-only document stored
	// with the pointer (RefsOnly set), or the full document (RefsOnly unset)
	// when the writer stored none. The full document is not read in the
	// first case. ErrNotFound when missing.
	ObjectGetRefs(ctx context.Context, ref ObjectRef) (*Object, error)
	// ObjectMetadataLocation returns only the metadata pointer: the cheap
	// lookup behind ETag revalidation and existence checks.
	ObjectMetadataLocation(ctx context.Context, ref ObjectRef) (string, error)
	// ObjectList lists the names of one kind in a namespace, ordered by name,
	// and the token of the next page ("" when no name follows this page).
	// ErrNotFound when the namespace is missing, ErrInvalidPageToken for a
	// token not issued by the store.
	ObjectList(ctx context.Context, warehouse string, namespace []string, kind ObjectKind, page Page) ([]string, string, error)
	// ObjectCreate inserts a table or view. ErrNotFound when the namespace is
	// missing; *AlreadyExistsError when the name is taken by either kind;
	// ErrLocationOverlap when its location overlaps another object's, live
	// or soft-deleted (DeletedObjects: its files may come back).
	ObjectCreate(ctx context.Context, o *Object) error
	// ObjectReplace re-points an existing object at externally written
	// metadata (register with overwrite). Same errors as ObjectCreate, and
	// ErrOrphanHold when an orphan-file removal holds the replaced table
	// (the new metadata may name any of its files).
	ObjectReplace(ctx context.Context, o *Object) error
	// ObjectDelete removes a table or view and returns what was removed.
	ObjectDelete(ctx context.Context, ref ObjectRef) (*Object, error)
	// ObjectDeleteIf is ObjectDelete that first hands the object about to be
	// removed (its full metadata included) to check, in the same
	// transaction: when check returns an error nothing is removed and that
	// error is returned as it is. check must not block.
	ObjectDeleteIf(ctx context.Context, ref ObjectRef, check func(*Object) error) (*Object, error)
	// ObjectRename moves a table or view to another name or namespace in the
	// same warehouse; metadata is not rewritten. ErrNotFound when the source
	// is missing; ErrNotFound wrapped with "namespace" when the destination
	// namespace is missing; *AlreadyExistsError when the target is taken.
	ObjectRename(ctx context.Context, from ObjectRef, toNamespace []string, toName string) error
	// ObjectsSwap applies every swap in one transaction, or none: ErrConflict
	// when any pointer moved, ErrLocationOverlap for a new location that overlaps another object's (live or soft-deleted),
	// ErrOrphanHold (an *OrphanHoldError) when a swap would add a file an
	// orphan-file removal holds (see Swap.Adds),
	// ErrOutcomeUnknown when the commit itself failed mid-flight.
	ObjectsSwap(ctx context.Context, swaps []Swap) error
	// PrepareSwap encodes sw's documents into sw.Packed ahead of
	// ObjectsSwap: compressing a large document is most of its swap's cost,
	// and a caller can overlap it with other work (the metadata file
	// write). Optional: ObjectsSwap encodes a swap that was not prepared.
	PrepareSwap(sw *Swap)

	// IdempotencyBegin claims c.Key for c.Owner. It returns (nil, nil) when
	// the caller now holds the key: it was free, its record was older than
	// c.TTL, or it was in flight, not Mutated, under a lease that ran out,
	// and is claimed with the same fingerprint. Otherwise it returns the
	// existing record for the caller to compare.
	IdempotencyBegin(ctx context.Context, c IdempotencyClaim) (*IdempotencyRecord, error)
	// IdempotencyRenew extends the lease of a key held by owner. ErrNotHeld
	// when owner no longer holds it (its lease ran out and another request
	// claimed it, or it was finished).
	IdempotencyRenew(ctx context.Context, key, owner string, lease time.Duration) error
	// IdempotencyFinish stores the final outcome of a key held by rec.Owner;
	// ErrNotHeld when rec.Owner no longer holds it.
	IdempotencyFinish(ctx context.Context, rec *IdempotencyRecord) error
	// IdempotencyAbandon releases a key held by owner without an outcome
	// (after a 5xx), so that a retry runs again. A Mutated key is not freed
	// but its lease ends at once: a retry must not repeat the change.
	// Releasing a key one does not hold is a no-op.
	IdempotencyAbandon(ctx context.Context, key, owner string) error

	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Now is the database's clock as this process estimates it. Times that
	// replicas compare with each other (leases, snapshot timestamps,
	// expiry cut-offs, created/updated stamps) come from here, so that a
	// replica whose own clock is off agrees with the others. It never
	// waits on the database.
	Now() time.Time
	// ClockOffset is how far the database's clock was ahead of this
	// process's at the last measurement (negative: behind); ok is false
	// until one has succeeded. The service refuses to commit on a replica
	// whose offset is too large (Options.MaxClockOffset), because
	// iceberg-go stamps metadata with the process's own clock.
	ClockOffset() (offset time.Duration, ok bool)
	// Close releases connections.
	Close()
}
