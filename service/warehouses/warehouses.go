// Package warehouses is the catalog's registry of warehouses: their
// creation (name, location and prefix checks), lookup, listing, deletion,
// the start-up path that ensures one exists, and their storage profiles.
// It takes its store, authorizer and secret sealer as values (Deps); the
// short-lived cache of warehouse rows that every request reads through
// stays with the service, which Deps.Forget tells of a changed profile.
package warehouses

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/store"
)

// Deps are what the registry needs from the catalog, as values.
type Deps struct {
	Store store.Store
	// Tables authorizes, and forgets a warehouse's cached row after its
	// profile changed.
	Tables *tableaccess.Access
	// Sealer encrypts storage-profile secrets at rest.
	Sealer *credentials.Sealer
}

// Registry creates, reads and deletes warehouses.
type Registry struct {
	d Deps
}

// New returns the registry over d.
func New(d Deps) *Registry {
	return &Registry{d: d}
}

// storeErr translates the store's errors for the common cases.
func storeErr(err error, what string) error { return storefault.Of(err, what) }

// warehouseName keeps names URL-safe: they are used raw as the REST prefix.
var warehouseName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// reservedPrefixes are path words clients could confuse with a prefix.
var reservedPrefixes = map[string]bool{
	"namespaces": true, "tables": true, "views": true, "transactions": true, "config": true, "oauth": true,
}

// NormalizeLocation validates a storage location and returns it in
// canonical form (internal/storagepath): file:///abs/path (file:/abs/path and
// file://localhost/abs/path are accepted), s3://bucket/... or
// gs://bucket/..., abfss://container@account.dfs.<suffix>/... or
// wasbs://container@account.blob.<suffix>/..., lowercase scheme, no ".",
// ".." or empty segment, no
// trailing slash. 400 when it does not normalise; the message gives the
// reason, not the location.
func NormalizeLocation(loc string) (string, error) {
	n, err := storagepath.Normalize(loc)
	if err != nil {
		return "", fault.Wrap(fault.BadRequest, err, "Invalid location: %s", fault.ClientText(err))
	}
	return n, nil
}

// Create registers a warehouse (the caller authorizes): 400 for a bad
// name or location (not normalisable, a filesystem root, no bucket), a bad
// allowed-locations property, or prefixes that overlap another
// warehouse's; 409 when the name is taken. allowed-locations is stored
// canonical.
func (r *Registry) Create(ctx context.Context, name, loc string, props map[string]string) (*store.Warehouse, error) {
	if !warehouseName.MatchString(name) || reservedPrefixes[name] {
		return nil, fault.New(fault.BadRequest, "Invalid warehouse name: use letters, digits, '_', '.', '-' (max 63), not a reserved word")
	}
	canon, err := NormalizeLocation(loc)
	if err != nil {
		return nil, err
	}
	props, mine, err := warehouseProps(canon, props)
	if err != nil {
		return nil, err
	}
	others, err := r.d.Store.WarehouseList(ctx)
	if err != nil {
		return nil, storeErr(err, name)
	}
	for _, o := range others {
		if o.Name == name {
			return nil, fault.New(fault.AlreadyExists, "Warehouse already exists: %s", name)
		}
	}
	for _, o := range others {
		if mine.Overlaps(locations.WarehousePrefixes(o)) {
			return nil, fault.New(fault.BadRequest, "Invalid location: it overlaps warehouse %s (warehouses may not share storage)", o.Name)
		}
	}
	w := &store.Warehouse{Name: name, Location: canon, Properties: props}
	err = r.d.Store.WarehouseCreate(ctx, w)
	if errors.Is(err, store.ErrAlreadyExists) {
		return nil, fault.Wrap(fault.AlreadyExists, err, "Warehouse already exists: %s", name)
	}
	return w, storeErr(err, name)
}

// warehouseProps copies props with allowed-locations made canonical and
// returns the warehouse's prefixes (location first): 400 for an entry that
// does not normalise.
func warehouseProps(canon string, props map[string]string) (map[string]string, storagepath.Set, error) {
	out := map[string]string{}
	for k, v := range props {
		out[k] = v
	}
	if err := upkeep.CheckDeletionProps(out); err != nil {
		return nil, nil, err
	}
	mine := storagepath.Set{canon}
	raw, ok := out[locations.AllowedLocationsKey]
	if !ok {
		return out, mine, nil
	}
	var extras []string
	for _, p := range strings.Split(raw, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := storagepath.Normalize(p)
		if err != nil {
			return nil, nil, fault.Wrap(fault.BadRequest, err, "Invalid %s: %v", locations.AllowedLocationsKey, err)
		}
		extras = append(extras, n)
	}
	out[locations.AllowedLocationsKey] = strings.Join(extras, ",")
	return out, append(mine, extras...), nil
}

// Get returns a warehouse (unauthorized) or 404 NoSuchWarehouseException.
func (r *Registry) Get(ctx context.Context, name string) (*store.Warehouse, error) {
	return r.d.Tables.GetWarehouse(ctx, name)
}

// List returns every warehouse (unauthorized), or the store's error.
func (r *Registry) List(ctx context.Context) ([]*store.Warehouse, error) {
	ws, err := r.d.Store.WarehouseList(ctx)
	return ws, storeErr(err, "")
}

// Delete removes a warehouse with no namespaces: 404 when missing,
// 409 when not empty.
func (r *Registry) Delete(ctx context.Context, name string) error {
	if err := r.d.Tables.Authorize(ctx, access.PrivManageWarehouses, access.WarehouseResource(name)); err != nil {
		return err
	}
	err := r.d.Store.WarehouseDelete(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotEmpty):
		return fault.Wrap(fault.NamespaceNotEmpty, err, "Warehouse is not empty: %s", name)
	case errors.Is(err, store.ErrNotFound):
		return fault.Wrap(fault.NoSuchWarehouse, err, "Warehouse does not exist: %s", name)
	}
	return storeErr(err, name)
}

// Ensure creates the warehouse when missing and returns it (unauthorized:
// the operator's start-up path); 409 when it exists with another location,
// Create's errors otherwise.
func (r *Registry) Ensure(ctx context.Context, name, where string) (*store.Warehouse, error) {
	w, err := r.d.Store.WarehouseGet(ctx, name)
	if err == nil {
		loc, nerr := NormalizeLocation(where)
		if nerr != nil {
			return nil, nerr
		}
		// Rows written before locations were canonical compare canonical.
		if stored, err := NormalizeLocation(w.Location); err != nil || stored != loc {
			return nil, fault.New(fault.AlreadyExists, "Warehouse %s exists with location %s, not %s", name, w.Location, loc)
		}
		return w, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, storeErr(err, name)
	}
	w, err = r.Create(ctx, name, where, nil)
	if fault.KindOf(err) == fault.AlreadyExists { // lost a race with another replica
		return r.Get(ctx, name)
	}
	return w, err
}

// SetStorageProfile validates a warehouse's storage profile, seals its
// secret with the server key and stores it. 400 for an invalid profile,
// an Azure profile whose filesystem does not hold the warehouse, or when
// the server has no secret key; 404 for a missing warehouse.
func (r *Registry) SetStorageProfile(ctx context.Context, name string, raw []byte) (any, error) {
	if err := r.d.Tables.Authorize(ctx, access.PrivManageWarehouses, access.WarehouseResource(name)); err != nil {
		return nil, err
	}
	p, redacted, err := credentials.ParseProfile(raw, r.d.Sealer)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "%s", fault.ClientText(err))
	}
	if ap, ok := p.(*credentials.ADLSProfile); ok {
		if err := r.checkADLSWarehouse(ctx, name, ap); err != nil {
			return nil, err
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode profile")
	}
	err = r.d.Store.WarehouseSetProfile(ctx, name, string(data))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.Wrap(fault.NoSuchWarehouse, err, "Warehouse does not exist: %s", name)
	}
	if err != nil {
		return nil, storeErr(err, name)
	}
	r.d.Tables.ForgetWarehouse(name)
	return redacted, nil
}

// StorageProfile returns a warehouse's profile without secrets (nil when
// none is set).
func (r *Registry) StorageProfile(ctx context.Context, name string) (any, error) {
	if err := r.d.Tables.Authorize(ctx, access.PrivManageWarehouses, access.WarehouseResource(name)); err != nil {
		return nil, err
	}
	w, err := r.Get(ctx, name)
	if err != nil || w.StorageProfile == "" {
		return nil, err
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(w.StorageProfile), &head)
	switch head.Type {
	case "gcs":
		var p credentials.GCSProfile
		if err := json.Unmarshal([]byte(w.StorageProfile), &p); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "stored profile of %s", name)
		}
		return p.Redacted(), nil
	case "adls":
		var p credentials.ADLSProfile
		if err := json.Unmarshal([]byte(w.StorageProfile), &p); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "stored profile of %s", name)
		}
		return p.Redacted(), nil
	}
	var p credentials.S3Profile
	if err := json.Unmarshal([]byte(w.StorageProfile), &p); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "stored profile of %s", name)
	}
	return p.Redacted(), nil
}

// checkADLSWarehouse refuses an Azure profile whose account and
// filesystem do not hold the warehouse's location (400): no table there
// could get a SAS, nor could the catalog write its metadata. 404 for a
// missing warehouse.
func (r *Registry) checkADLSWarehouse(ctx context.Context, name string, p *credentials.ADLSProfile) error {
	w, err := r.Get(ctx, name)
	if err != nil {
		return err
	}
	if _, err := p.ParseADLSLocation(w.Location + "/t"); err != nil {
		return fault.New(fault.BadRequest, "storage profile: the warehouse location is not in filesystem %s of account %s", p.Filesystem, p.AccountName)
	}
	return nil
}
