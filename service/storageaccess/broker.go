// Package storageaccess decides which storage access a caller gets for a
// table's files: vended credentials (each naming the route that refreshes
// it), the properties that make an engine sign its S3 requests through the
// catalog, the signatures themselves, or nothing; and whether what a table
// would get keeps Comet's native Parquet writer eligible. Every vend and
// signature is audited, and no key outside the allowlist of package
// credentials ever reaches a client. It takes its dependencies as values
// (see Deps) and knows nothing of the catalog's orchestration (package
// service), which calls it.
package storageaccess

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// Deps are what a Broker works with.
type Deps struct {
	// Tables gives the store (a table's pointer, the database's clock),
	// the authorizer that judges a caller's storage access, the warehouse
	// lookup and the table loader with its cache.
	Tables *tableaccess.Access
	// Credentials vends storage credentials; nil vends none.
	Credentials credentials.Vendor
	// Signer signs S3 requests; nil signs none and never offers signing.
	Signer credentials.Signer
	// Audit records one audit event (the service's RecordAudit): a sink
	// the broker writes to, not a call back into the rooms.
	Audit func(ctx context.Context, e store.AuditEvent)
}

// Broker decides and hands out storage access to tables' files. It holds
// no state of its own between calls and is safe for concurrent use.
type Broker struct {
	d Deps
}

// New returns a Broker over d.
func New(d Deps) *Broker {
	return &Broker{d: d}
}

// Delegation is how a client asked to reach a table's files: the
// X-Iceberg-Access-Delegation modes it named.
type Delegation uint8

// Delegation modes; a client may name both.
const (
	VendedCredentials Delegation = 1 << iota
	RemoteSigning

	NoDelegation Delegation = 0
)

// Grant returns the storage access a client that named deleg gets to
// table id at location, for a table result: the client config and the
// storage credentials. With no delegation that is an empty config; else
// remote-signing properties (signingConfig) or vended credentials. data
// is the metadata document at metaLoc ("" for a staged create), read for
// the table's signing preference only when it matters. Errors: 403 when
// the caller may neither read nor write the table's data or the location
// is not strictly inside the warehouse, 500 when data does not parse, 503
// when the vendor fails.
func (b *Broker) Grant(ctx context.Context, w *store.Warehouse, id ident.Ident, metaLoc string, data []byte, location string, deleg Delegation) (map[string]string, []credentials.StorageCredential, error) {
	if deleg == NoDelegation {
		return map[string]string{}, nil, nil
	}
	cfg, err := b.signingConfig(ctx, w, id, metaLoc, data, deleg)
	if err != nil || cfg != nil {
		return cfg, nil, err
	}
	return b.vend(ctx, w, id, location)
}

// vend mints credentials for a table location at the access level the
// authorizer grants. No key outside the allowlist ever leaves the catalog,
// whatever a vendor returns; each storage credential names the route that
// refreshes it. 403 for a location that is not strictly inside the
// warehouse: the table rule should make that impossible, but a credential
// is the one thing that must never cover someone else's prefix.
func (b *Broker) vend(ctx context.Context, w *store.Warehouse, id ident.Ident, tableLoc string) (_ map[string]string, _ []credentials.StorageCredential, err error) {
	if b.d.Credentials == nil {
		return map[string]string{}, nil, nil
	}
	var level credentials.AccessLevel
	defer func() { b.auditVend(ctx, access.TableResource(w.Name, id.Namespace, id.Name), level, err) }()
	if !locations.WarehousePrefixes(w).ContainsBelow(tableLoc) {
		return nil, nil, fault.New(fault.Forbidden, "Storage credentials are only vended for table locations inside the warehouse")
	}
	level, err = b.d.Tables.Authorizer().TableAccess(ctx, identity.From(ctx), access.TableResource(w.Name, id.Namespace, id.Name))
	if err != nil {
		return nil, nil, err
	}
	info := warehouseInfo(w)
	cfg, creds, err := b.d.Credentials.Vend(ctx, info, tableLoc, level)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Unavailable, err, "Could not vend storage credentials for %s", id)
	}
	out, _ := credentials.FilterConfig(cfg)
	refresh := refreshEndpoint(w.Name, id)
	var list []credentials.StorageCredential
	for _, c := range creds {
		filtered, _ := credentials.FilterCredential(c.Config)
		switch {
		case strings.HasPrefix(c.Prefix, "gs://"):
			filtered["gcs.oauth2.refresh-credentials-endpoint"] = refresh
		case storagepath.IsAzure(c.Prefix):
			filtered["adls.refresh-credentials-endpoint"] = refresh
		default:
			filtered["client.refresh-credentials-endpoint"] = refresh
		}
		list = append(list, credentials.StorageCredential{Prefix: c.Prefix, Config: filtered})
	}
	return out, list, nil
}

// CheckVend fails, before anything is created, when credentials are asked
// for and the caller may not have them: the authorizer's error (403) is
// returned as is. It returns nil when deleg names no delegation or the
// catalog vends no credentials.
func (b *Broker) CheckVend(ctx context.Context, w *store.Warehouse, id ident.Ident, deleg Delegation) error {
	if deleg == NoDelegation || b.d.Credentials == nil {
		return nil
	}
	_, err := b.d.Tables.Authorizer().TableAccess(ctx, identity.From(ctx), access.TableResource(w.Name, id.Namespace, id.Name))
	return err
}

// refreshEndpoint is the loadCredentials path of a table, relative to the
// catalog URI, as clients expect in client.refresh-credentials-endpoint.
func refreshEndpoint(warehouse string, id ident.Ident) string {
	return tableRoute(warehouse, id) + "/credentials"
}

// tableRoute is a table's REST path relative to the catalog URI, the base
// of its credentials and sign routes that load responses name.
func tableRoute(warehouse string, id ident.Ident) string {
	levels := make([]string, len(id.Namespace))
	for i, l := range id.Namespace {
		levels[i] = url.PathEscape(l)
	}
	return "v1/" + warehouse + "/namespaces/" + strings.Join(levels, "%1F") + "/tables/" + url.PathEscape(id.Name)
}

// LoadCredentials returns the storage credentials of a table (empty when
// the warehouse has no storage profile): 400 for a bad identifier, 404
// when the table is missing or hidden from the caller, 403 without
// table-read-data or table-write-data or for a location outside the
// warehouse, 503 when the database or the vendor fails.
func (b *Broker) LoadCredentials(ctx context.Context, warehouse string, id ident.Ident) ([]credentials.StorageCredential, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if _, err := b.d.Tables.Authorizer().TableAccess(ctx, identity.From(ctx), access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		// A refused vend is part of the audit trail too.
		b.auditVend(ctx, access.TableResource(warehouse, id.Namespace, id.Name), "", err)
		return nil, err
	}
	obj, err := b.d.Tables.Store().ObjectGet(ctx, store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindTable})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ident.TableNotFound(err, id)
	}
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	w, err := b.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	_, creds, err := b.vend(ctx, w, id, obj.Location)
	return creds, err
}
