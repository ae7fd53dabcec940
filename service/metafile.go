package service

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store"
)

// warehouseCache keeps warehouse rows for a few seconds: they are read on
// every commit for storage properties and change rarely. Correctness does
// not depend on it (it only configures file IO).
type warehouseCache struct {
	mu      sync.Mutex
	entries map[string]warehouseEntry
}

type warehouseEntry struct {
	w       *store.Warehouse
	expires time.Time
}

const warehouseCacheTTL = 10 * time.Second

func (s *Service) warehouse(ctx context.Context, name string) (*store.Warehouse, error) {
	c := &s.whCache
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && time.Now().Before(e.expires) {
		return e.w, nil
	}
	w, err := s.getWarehouse(ctx, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]warehouseEntry{}
	}
	c.entries[name] = warehouseEntry{w: w, expires: time.Now().Add(warehouseCacheTTL)}
	c.mu.Unlock()
	return w, nil
}

// fileIO returns the IO for a location of warehouse w: 400 for a location
// that is not inside the warehouse's prefixes, whatever the caller (the
// catalog never reads, writes or deletes elsewhere).
func (s *Service) fileIO(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error) {
	props, err := s.ioProps(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	io, err := s.files.For(ctx, loc, props)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Cannot access storage for %s", fileName(w, w.Location, loc))
	}
	return io, nil
}

// ioProps returns the FileIO properties for loc, after checking that loc
// lies inside the warehouse. With a storage profile the catalog itself
// uses the profile's identity for the profile's kind of location (S3's
// keys; Azure's account key, or a filesystem SAS of its service
// principal). 503 when the profile's secret cannot be opened or no SAS
// can be had now.
func (s *Service) ioProps(ctx context.Context, w *store.Warehouse, loc string) (map[string]string, error) {
	if !warehousePrefixes(w).Contains(loc) {
		return nil, fault.New(fault.BadRequest, "Refusing a location outside the warehouse")
	}
	switch {
	case w.StorageProfile == "":
	case strings.HasPrefix(loc, "s3://"):
		return s.s3Props(w)
	case location.IsAzure(loc):
		return s.adlsProps(ctx, w)
	}
	return w.Properties, nil
}

// s3Props adds an S3 profile's identity to the warehouse properties.
func (s *Service) s3Props(w *store.Warehouse) (map[string]string, error) {
	var p credentials.S3Profile
	if err := json.Unmarshal([]byte(w.StorageProfile), &p); err != nil || p.Type != "s3" {
		return w.Properties, nil
	}
	secret, err := s.opts.Sealer.Open(p.SealedSecret)
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
func (s *Service) adlsProps(ctx context.Context, w *store.Warehouse) (map[string]string, error) {
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
		secret, err := s.opts.Sealer.Open(p.SealedAccountKey)
		if err != nil {
			return nil, fault.Wrap(fault.Unavailable, err, "Cannot open the storage profile of %s", w.Name)
		}
		props["adls.auth.shared-key.account.name"], props["adls.auth.shared-key.account.key"] = p.AccountName, secret
		return props, nil
	}
	minter, ok := s.opts.Credentials.(catalogSAS)
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
