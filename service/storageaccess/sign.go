package storageaccess

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
)

// ActionSignRequest is the action of an audit event recording a remote
// signing request (signed or refused).
const ActionSignRequest = "sign-request"

// TablePropertyRemoteSigning opts one table into remote signing (its
// engines sign through the catalog even where STS could vend).
const TablePropertyRemoteSigning = "s3.remote-signing-enabled"

// SignS3Request signs an S3 request for an engine reading or writing the
// table id with no storage credentials of its own. The caller needs
// table-read-data (reads, lists) or table-write-data (writes, multipart,
// deletes). Errors: 404 when the table is missing or hidden, 403 without
// either privilege, for a request outside the table's location, beyond
// the caller's access, or on storage without remote signing, 400 for a
// malformed request, 503 when the database or the profile's secret is
// unavailable. Every answer is audited.
func (b *Broker) SignS3Request(ctx context.Context, warehouse string, id ident.Ident, r credentials.S3SignRequest) (_ credentials.SignedRequest, err error) {
	if err := ident.ValidateIdent(id); err != nil {
		return credentials.SignedRequest{}, err
	}
	var level credentials.AccessLevel
	var op string
	defer func() { b.auditSign(ctx, access.TableResource(warehouse, id.Namespace, id.Name), level, op, err) }()
	if r.Method == "" || r.URI == "" || r.Region == "" {
		return credentials.SignedRequest{}, fault.New(fault.BadRequest, "A request to sign needs its method, uri and region")
	}
	level, err = b.d.Tables.Authorizer().TableAccess(ctx, identity.From(ctx), access.TableResource(warehouse, id.Namespace, id.Name))
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	if b.d.Signer == nil {
		return credentials.SignedRequest{}, fault.New(fault.Forbidden, "Remote signing is not enabled on this catalog")
	}
	obj, entry, err := b.d.Tables.ReadTable(ctx, warehouse, id)
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	w, err := b.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	if !locations.WarehousePrefixes(w).ContainsBelow(obj.Location) {
		return credentials.SignedRequest{}, fault.New(fault.Forbidden, "Requests are only signed for table locations inside the warehouse")
	}
	signed, err := b.d.Signer.Sign(ctx, warehouseInfo(w), obj.Location, prefersSigning(entry.Meta.Properties()), level, r, b.d.Tables.Store().Now())
	op = signed.Op.Name
	var refusal *credentials.SignRefusal
	switch {
	case errors.As(err, &refusal) && refusal.Forbidden:
		return credentials.SignedRequest{}, fault.New(fault.Forbidden, "%s", refusal.Msg)
	case errors.As(err, &refusal):
		return credentials.SignedRequest{}, fault.New(fault.BadRequest, "%s", refusal.Msg)
	case err != nil:
		return credentials.SignedRequest{}, fault.Wrap(fault.Unavailable, err, "Could not sign the request for %s", id)
	}
	return signed, nil
}

// signingConfig returns the properties that make the client sign its S3
// requests through the catalog, or nil when it should get vended
// credentials instead (signingChoice). 403 when the caller may neither
// read nor write the table's data, as for vending.
func (b *Broker) signingConfig(ctx context.Context, w *store.Warehouse, id ident.Ident, metaLoc string, data []byte, deleg Delegation) (map[string]string, error) {
	cfg, err := b.signingChoice(w, id, deleg, func() (map[string]string, error) {
		if e := b.d.Tables.CachedMeta(metaLoc); e != nil && metaLoc != "" {
			return e.Meta.Properties(), nil
		}
		// Not parsed yet. Most tables never name the property: a byte
		// search spares every vended load the scan of its whole document.
		if !bytes.Contains(data, []byte(TablePropertyRemoteSigning)) {
			return nil, nil
		}
		// Only the properties are needed (data may be a refs-only
		// document, which must not enter the cache).
		var doc struct {
			Properties map[string]string `json:"properties"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "stored metadata of %s does not parse", id)
		}
		return doc.Properties, nil
	})
	if err != nil || cfg == nil {
		return nil, err
	}
	if _, err := b.d.Tables.Authorizer().TableAccess(ctx, identity.From(ctx), access.TableResource(w.Name, id.Namespace, id.Name)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// signingChoice decides between signing and vending for a client that
// named deleg. It signs when the warehouse or the table enables signing
// and either the client asked for signing alone, the warehouse cannot
// vend (no role to assume, or no vendor), or the table property
// s3.remote-signing-enabled prefers signing. props, read only when the
// table's preference matters, returns the table's properties.
func (b *Broker) signingChoice(w *store.Warehouse, id ident.Ident, deleg Delegation, props func() (map[string]string, error)) (map[string]string, error) {
	if b.d.Signer == nil {
		return nil, nil
	}
	cfg, enabled, canVend := b.d.Signer.Signing(warehouseInfo(w), tableRoute(w.Name, id)+"/sign")
	if cfg == nil {
		return nil, nil // not an S3 warehouse
	}
	if enabled && (deleg == RemoteSigning || !canVend || b.d.Credentials == nil) {
		return cfg, nil
	}
	p, err := props()
	if err != nil || !prefersSigning(p) {
		return nil, err
	}
	return cfg, nil
}

// prefersSigning reports whether a table's properties opt it into
// remote signing.
func prefersSigning(props map[string]string) bool {
	return strings.EqualFold(props[TablePropertyRemoteSigning], "true")
}

func warehouseInfo(w *store.Warehouse) credentials.WarehouseInfo {
	return credentials.WarehouseInfo{Name: w.Name, Location: w.Location, Properties: w.Properties, StorageProfile: w.StorageProfile}
}

// auditSign records a signing request: the S3 operation and the access
// level it was judged at, and the status of a refusal.
func (b *Broker) auditSign(ctx context.Context, table access.Resource, level credentials.AccessLevel, op string, err error) {
	detail := ""
	if op != "" {
		detail = "op=" + op
	}
	b.auditStorageAccess(ctx, ActionSignRequest, table, level, detail, err)
}
