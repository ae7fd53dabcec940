package tableaccess

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
)

// MsgStorageUnavailable answers a write the object store or disk could
// not take now (a 503: nothing was committed).
const MsgStorageUnavailable = "Storage unavailable: cannot write metadata file %s, nothing was committed; retry later"

// FileIO returns the IO for a location of warehouse w: 400 for a location
// that is not inside the warehouse's prefixes, whatever the caller (the
// catalog never reads, writes or deletes elsewhere); IOProps' 503s.
func (a *Access) FileIO(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error) {
	props, err := a.IOProps(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	io, err := a.opts.Files.For(ctx, loc, props)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Cannot access storage for %s", locations.FileName(w, w.Location, loc))
	}
	return io, nil
}

// IOProps returns the FileIO properties for loc, after checking that loc
// lies inside the warehouse (400 when not). With a storage profile the
// catalog itself uses the profile's identity for the profile's kind of
// location (S3's keys; Azure's account key, or a filesystem SAS of its
// service principal). 503 when the profile's secret cannot be opened or
// no SAS can be had now.
func (a *Access) IOProps(ctx context.Context, w *store.Warehouse, loc string) (map[string]string, error) {
	if !locations.WarehousePrefixes(w).Contains(loc) {
		return nil, fault.New(fault.BadRequest, "Refusing a location outside the warehouse")
	}
	switch {
	case w.StorageProfile == "":
	case strings.HasPrefix(loc, "s3://"):
		return a.s3Props(w)
	case storagepath.IsAzure(loc):
		return a.adlsProps(ctx, w)
	}
	return w.Properties, nil
}

// s3Props adds an S3 profile's identity to the warehouse properties.
func (a *Access) s3Props(w *store.Warehouse) (map[string]string, error) {
	var p credentials.S3Profile
	if err := json.Unmarshal([]byte(w.StorageProfile), &p); err != nil || p.Type != "s3" {
		return w.Properties, nil
	}
	secret, err := a.opts.Sealer.Open(p.SealedSecret)
	if err != nil {
		return nil, fault.Wrap(fault.Unavailable, err, "Cannot open the storage profile of %s", w.Name)
	}
	props := maps.Clone(w.Properties)
	if props == nil {
		props = map[string]string{}
	}
	props["s3.region"], props["s3.access-key-id"], props["s3.secret-access-key"] = p.Region, p.AccessKeyID, secret
	if p.Endpoint != "" {
		props["s3.endpoint"] = p.Endpoint
	}
	props["s3.force-virtual-addressing"] = strconv.FormatBool(!p.PathStyleAccess)
	return props, nil
}

// catalogSAS is what mints the catalog's own Azure SAS (vending.Multi).
type catalogSAS interface {
	CatalogSAS(ctx context.Context, p *credentials.ADLSProfile) (string, error)
}

// adlsProps adds an Azure profile's identity to the warehouse properties,
// in iceberg-go's names: the shared key, or a SAS on the filesystem.
func (a *Access) adlsProps(ctx context.Context, w *store.Warehouse) (map[string]string, error) {
	var p credentials.ADLSProfile
	if err := json.Unmarshal([]byte(w.StorageProfile), &p); err != nil || p.Type != "adls" {
		return w.Properties, nil
	}
	props := maps.Clone(w.Properties)
	if props == nil {
		props = map[string]string{}
	}
	scheme, host, _ := p.BlobService()
	props["adls.protocol"], props["adls.endpoint"] = scheme, strings.TrimPrefix(host, p.AccountName+".")
	if p.SharedKey() {
		secret, err := a.opts.Sealer.Open(p.SealedAccountKey)
		if err != nil {
			return nil, fault.Wrap(fault.Unavailable, err, "Cannot open the storage profile of %s", w.Name)
		}
		props["adls.auth.shared-key.account.name"], props["adls.auth.shared-key.account.key"] = p.AccountName, secret
		return props, nil
	}
	minter, ok := a.opts.Credentials.(catalogSAS)
	if !ok {
		return nil, fault.New(fault.Unavailable, "The storage profile of %s needs a credential vendor to reach Azure", w.Name)
	}
	token, err := minter.CatalogSAS(ctx, &p)
	if err != nil {
		return nil, fault.Wrap(fault.Unavailable, err, "Cannot get a SAS for the storage profile of %s", w.Name)
	}
	for _, svc := range []string{"dfs", "blob"} {
		props["adls.sas-token."+p.AccountName+"."+svc+"."+p.Suffix()] = token
	}
	return props, nil
}

// WriteFile writes data at loc, a file the catalog creates (metadata,
// manifests). A failure means nothing was committed: FileIO's 400, 503
// when the store could not do it now (storage.Unavailable: a timeout, a
// cut connection, S3 answering 5xx or SlowDown, a full disk), else 500.
func (a *Access) WriteFile(ctx context.Context, w *store.Warehouse, loc string, data []byte) error {
	io, err := a.FileIO(ctx, w, loc)
	if err != nil {
		return err
	}
	if err := io.Write(ctx, loc, data); err != nil {
		if storage.Unavailable(err) {
			return fault.Wrap(fault.Unavailable, err, MsgStorageUnavailable, locations.FileName(w, w.Location, loc))
		}
		return fault.Wrap(fault.Internal, err, "Failed to write metadata file %s", locations.FileName(w, w.Location, loc))
	}
	return nil
}

// DeleteOrphan removes a file that lost its commit; failures are only
// logged (an unreferenced file is harmless). FileIO keeps it inside the
// warehouse.
func (a *Access) DeleteOrphan(ctx context.Context, w *store.Warehouse, loc string) {
	io, err := a.FileIO(ctx, w, loc)
	if err == nil {
		err = io.Delete(context.WithoutCancel(ctx), loc)
	}
	if err != nil {
		a.opts.Logger.WarnContext(ctx, "could not delete orphan metadata file", "file", locations.FileName(w, w.Location, loc), "error", storage.PathFree(err))
	}
}

// DeleteTableFile removes a file of the table at tableLoc, refusing (with
// a warning) one outside the table's prefixes; failures are logged.
func (a *Access) DeleteTableFile(ctx context.Context, w *store.Warehouse, tableLoc, loc string) {
	if !locations.TablePrefixes(w, tableLoc).Contains(loc) {
		a.opts.Logger.WarnContext(ctx, "left a file outside the table", "file", locations.FileName(w, tableLoc, loc))
		return
	}
	a.DeleteOrphan(ctx, w, loc)
}
