// Package tables creates, registers, loads, lists, renames and drops the
// catalog's tables (listing, renaming and dropping serve views and
// functions too: they share one name space per namespace). Table commits
// are tablecommit's; this room only reads and writes whole objects.
package tables

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/golang-lru/v2"
	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/store"
)

// Deps are what the room takes from the rooms below it.
type Deps struct {
	// Tables reaches warehouses, file IO, authorize and events.
	Tables *tableaccess.Access
	// Commits checks the metadata a create writes (size, clock skew).
	Commits *tablecommit.Committer
	// Broker grants the storage access a client asks for on create,
	// register and load.
	Broker *storageaccess.Broker
	// VerifyMetadataOnLoad makes LoadTable stat the metadata file
	// (service.Options.VerifyMetadataOnLoad).
	VerifyMetadataOnLoad bool
}

// Tables is the table room; New builds it.
type Tables struct {
	ta     *tableaccess.Access
	store  store.Store
	tc     *tablecommit.Committer
	broker *storageaccess.Broker
	verify bool
	refs   *lru.Cache[string, []byte] // refs-only documents by metadata location
}

// New returns the room over d.
func New(d Deps) *Tables {
	refs, _ := lru.New[string, []byte](512)
	return &Tables{ta: d.Tables, store: d.Tables.Store(), tc: d.Commits, broker: d.Broker, verify: d.VerifyMetadataOnLoad, refs: refs}
}

// reservedTableProperties are derived from metadata and never stored.
var reservedTableProperties = []string{
	"format-version", "uuid", "snapshot-count", "current-snapshot-id", "current-snapshot-summary",
	"current-snapshot-timestamp-ms", "current-schema", "default-partition-spec", "default-sort-order",
}

// CreateTableInput is a createTable request.
type CreateTableInput struct {
	Name        string
	Location    string
	Schema      json.RawMessage
	Spec        json.RawMessage
	SortOrder   json.RawMessage
	StageCreate bool
	Properties  map[string]string
	// Delegation asks for storage credentials or remote signing in the
	// result.
	Delegation storageaccess.Delegation
}

// TableResult is what createTable, registerTable, loadTable and commits
// return: the metadata JSON as stored, its location ("" for a staged create)
// and per-table client config.
type TableResult struct {
	MetadataLocation   string
	Metadata           []byte
	Config             map[string]string
	StorageCredentials []credentials.StorageCredential
	// RemoteSigning is set exactly when Config turns remote signing on
	// (storageaccess.RemoteSigningOf).
	RemoteSigning *storageaccess.RemoteSigningConfig
	// Warning, when set, is a caution about what the change costs (the
	// HTTP layer sends it as a Warning header): V4UpgradeWarning.
	Warning string
}

// tableResult assembles a TableResult with the storage access the client
// asked for (storageaccess.Broker.Grant, which says what is returned when).
func (t *Tables) tableResult(ctx context.Context, w *store.Warehouse, id ident.Ident, metaLoc string, data []byte, location string, deleg storageaccess.Delegation) (*TableResult, error) {
	cfg, creds, err := t.broker.Grant(ctx, w, id, metaLoc, data, location, deleg)
	if err != nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: metaLoc, Metadata: data, Config: cfg, StorageCredentials: creds,
		RemoteSigning: storageaccess.RemoteSigningOf(cfg)}, nil
}
