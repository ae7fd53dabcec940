package service

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/storage"
	"github.com/lakehold/catalog/store"
)

// metadataPathKey overrides where metadata files go (table and view property).
const metadataPathKey = "write.metadata.path"

var metadataVersion = regexp.MustCompile(`^(\d+)-[^/]*\.metadata\.json$`)

// newMetadataLocation names the next metadata file:
// <location>/metadata/<NNNNN>-<uuid>.metadata.json, numbered one past the
// previous file (0 for a new table).
func newMetadataLocation(location string, props map[string]string, previous string) string {
	version := 0
	if previous != "" {
		if m := metadataVersion.FindStringSubmatch(path.Base(previous)); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				version = n + 1
			}
		}
	}
	dir := strings.TrimRight(location, "/") + "/metadata"
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
	w, err := s.GetWarehouse(ctx, name)
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

// fileIO returns the IO for a location of warehouse w. With an S3 storage
// profile the catalog itself uses the profile's identity for S3 locations.
func (s *Service) fileIO(ctx context.Context, w *store.Warehouse, location string) (storage.FileIO, error) {
	props := w.Properties
	if w.StorageProfile != "" && strings.HasPrefix(location, "s3://") {
		var p credentials.S3Profile
		if err := json.Unmarshal([]byte(w.StorageProfile), &p); err == nil && p.Type == "s3" {
			secret, err := s.opts.Sealer.Open(p.SealedSecret)
			if err != nil {
				return nil, wrapErr(KindUnavailable, err, "Cannot open the storage profile of %s", w.Name)
			}
			props = map[string]string{}
			for k, v := range w.Properties {
				props[k] = v
			}
			props["s3.region"], props["s3.access-key-id"], props["s3.secret-access-key"] = p.Region, p.AccessKeyID, secret
			if p.Endpoint != "" {
				props["s3.endpoint"] = p.Endpoint
			}
			props["s3.force-virtual-addressing"] = strconv.FormatBool(!p.PathStyleAccess)
		}
	}
	io, err := s.files.For(ctx, location, props)
	if err != nil {
		return nil, wrapErr(KindBadRequest, err, "Cannot access storage at %s", location)
	}
	return io, nil
}

// writeMetadataFile writes data at loc. A failure means nothing was
// committed, so it maps to a retryable 409 on commit paths.
func (s *Service) writeMetadataFile(ctx context.Context, w *store.Warehouse, loc string, data []byte) error {
	io, err := s.fileIO(ctx, w, loc)
	if err != nil {
		return err
	}
	if err := io.Write(ctx, loc, data); err != nil {
		return wrapErr(KindInternal, err, "Failed to write metadata file %s", loc)
	}
	return nil
}

// writeNextMetadata names and writes the metadata file that follows obj's
// current one, for a table or view whose new location and properties are
// given. It returns the new file's location and, when the object moved, its
// normalized new location ("" otherwise). A write failure is KindCommitFailed:
// nothing points at the new file yet, so nothing was committed.
func (s *Service) writeNextMetadata(ctx context.Context, w *store.Warehouse, obj *store.Object, location string, props map[string]string, data []byte) (metaLoc, newLoc string, err error) {
	if location != obj.Location {
		if newLoc, err = NormalizeLocation(location); err != nil {
			return "", "", err
		}
	}
	metaLoc = newMetadataLocation(location, props, obj.MetadataLocation)
	if err := s.writeMetadataFile(ctx, w, metaLoc, data); err != nil {
		return "", "", wrapErr(KindCommitFailed, err, "Commit failed: cannot write metadata file %s, nothing was committed", metaLoc)
	}
	return metaLoc, newLoc, nil
}

// deleteOrphan removes a metadata file that lost its commit; failures are
// only logged (an unreferenced file is harmless).
func (s *Service) deleteOrphan(ctx context.Context, w *store.Warehouse, loc string) {
	io, err := s.fileIO(ctx, w, loc)
	if err == nil {
		err = io.Delete(context.WithoutCancel(ctx), loc)
	}
	if err != nil {
		s.log.WarnContext(ctx, "could not delete orphan metadata file", "location", loc, "error", err)
	}
}
