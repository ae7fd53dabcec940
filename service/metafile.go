package service

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store"
)

// metadataPathKey overrides where metadata files go (table and view property).
const metadataPathKey = "write.metadata.path"

var metadataVersion = regexp.MustCompile(`^(\d+)-[^/]*\.metadata\.json$`)

// newMetadataLocation names the next metadata file:
// <location>/metadata/<NNNNN>-<uuid>.metadata.json (or under
// write.metadata.path), numbered one past the previous file (0 for a new
// table). It does not judge the location: fileIO refuses a write outside the
// warehouse, and writeNextMetadata checks write.metadata.path first.
func newMetadataLocation(loc string, props map[string]string, previous string) string {
	version := 0
	if previous != "" {
		if m := metadataVersion.FindStringSubmatch(path.Base(previous)); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				version = n + 1
			}
		}
	}
	dir := strings.TrimRight(loc, "/") + "/metadata"
	if p := props[metadataPathKey]; p != "" {
		dir = strings.TrimRight(p, "/")
	}
	return fmt.Sprintf("%s/%05d-%s.metadata.json", dir, version, uuid.New())
}

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

// msgStorageUnavailable answers a write the object store or disk could
// not do now; the argument names the file relative to its table.
const msgStorageUnavailable = "Storage unavailable: cannot write metadata file %s, nothing was committed; retry later"

// writeMetadataFile writes data at loc. A failure means nothing was
// committed: 503 when the store could not do it now (storage.Unavailable:
// a timeout, a cut connection, S3 answering 5xx or SlowDown, a full
// disk), else a retryable 409 on commit paths.
func (s *Service) writeMetadataFile(ctx context.Context, w *store.Warehouse, loc string, data []byte) error {
	io, err := s.fileIO(ctx, w, loc)
	if err != nil {
		return err
	}
	if err := io.Write(ctx, loc, data); err != nil {
		if storage.Unavailable(err) {
			return fault.Wrap(fault.Unavailable, err, msgStorageUnavailable, fileName(w, w.Location, loc))
		}
		return fault.Wrap(fault.Internal, err, "Failed to write metadata file %s", fileName(w, w.Location, loc))
	}
	return nil
}

// writeNextMetadata names and writes the metadata file that follows obj's
// current one, for a table or view whose new location and properties are
// given. It returns the new file's location and, when the object moved, its
// normalized new location ("" otherwise). 400 when the location is outside
// the warehouse or a write.*.path property outside the object's prefixes
// (location policy); a write failure is fault.Unavailable when the store
// could not do it now, else fault.CommitFailed: nothing points at the new
// file yet, so nothing was committed.
func (s *Service) writeNextMetadata(ctx context.Context, w *store.Warehouse, obj *store.Object, loc string, props map[string]string, data []byte) (metaLoc, newLoc string, err error) {
	canon, err := checkObjectLocation(w, loc)
	if err != nil {
		return "", "", err
	}
	if canon != obj.Location {
		newLoc = canon
	}
	if err := checkWritePaths(w, canon, props); err != nil {
		return "", "", err
	}
	metaLoc = newMetadataLocation(loc, props, obj.MetadataLocation)
	if err := s.writeMetadataFile(ctx, w, metaLoc, data); err != nil {
		switch fault.KindOf(err) {
		case fault.BadRequest:
			return "", "", err
		case fault.Unavailable:
			return "", "", fault.Wrap(fault.Unavailable, err, msgStorageUnavailable, fileName(w, canon, metaLoc))
		}
		return "", "", fault.Wrap(fault.CommitFailed, err, "Commit failed: cannot write metadata file %s, nothing was committed", fileName(w, canon, metaLoc))
	}
	return metaLoc, newLoc, nil
}

// deleteOrphan removes a metadata file that lost its commit; failures are
// only logged (an unreferenced file is harmless). fileIO keeps it inside
// the warehouse.
func (s *Service) deleteOrphan(ctx context.Context, w *store.Warehouse, loc string) {
	io, err := s.fileIO(ctx, w, loc)
	if err == nil {
		err = io.Delete(context.WithoutCancel(ctx), loc)
	}
	if err != nil {
		s.log.WarnContext(ctx, "could not delete orphan metadata file", "file", fileName(w, w.Location, loc), "error", storage.PathFree(err))
	}
}

// deleteTableFile deletes a file of the table or view at tableLoc, only
// when it lies inside the object's prefixes (location policy); a file
// outside is logged by name and left alone. Failures are only logged.
func (s *Service) deleteTableFile(ctx context.Context, w *store.Warehouse, tableLoc, loc string) {
	if !tablePrefixes(w, tableLoc).Contains(loc) {
		s.log.WarnContext(ctx, "left a file outside the table", "file", fileName(w, tableLoc, loc))
		return
	}
	s.deleteOrphan(ctx, w, loc)
}
