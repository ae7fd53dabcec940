package v4read

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	icebergio "github.com/apache/iceberg-go/io"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// FileIOFunc returns the IO for a location of warehouse w, or an error
// (such as a 400 for a location outside the warehouse) that a read returns
// as is.
type FileIOFunc func(ctx context.Context, w *store.Warehouse, loc string) (storage.FileIO, error)

// FileNameFunc names loc for messages: relative to base when inside it,
// never a whole path outside the warehouse.
type FileNameFunc func(w *store.Warehouse, base, loc string) string

// Readers reads v4 manifests through FileIO and caches what it read. It
// is safe for concurrent use.
type Readers struct {
	fileIO   FileIOFunc
	fileName FileNameFunc

	leafCache *lru.Cache[string, []v4manifest.TrackedFile]
	rootCache *lru.Cache[string, []v4manifest.TrackedFile]
	footers   *lru.Cache[string, *v4manifest.Footer] // parsed manifest footers by location
}

// New returns Readers that open files with fileIO and name them in error
// messages with fileName.
func New(fileIO FileIOFunc, fileName FileNameFunc) *Readers {
	leaves, _ := lru.New[string, []v4manifest.TrackedFile](256)
	roots, _ := lru.New[string, []v4manifest.TrackedFile](64)
	footers, _ := lru.New[string, *v4manifest.Footer](maxCachedFooters)
	return &Readers{fileIO: fileIO, fileName: fileName, leafCache: leaves, rootCache: roots, footers: footers}
}

// wholeManifestBytes is the size up to which a manifest read for some of
// its columns is still read whole. A manifest read for all its columns is
// always read whole.
const wholeManifestBytes = 1 << 20

// manifestSource is what the Parquet reader of a manifest reads from: the
// whole file in memory when whole is set or the file is small, else f.
//
// The Parquet reader fetches the footer and then every column chunk with
// its own ReadAt; on an object store each ReadAt is a ranged GET, so a
// manifest with a few dozen columns (every root and leaf: tracking,
// manifest info, stats) cost as many round trips, about 1 ms each on a
// local SeaweedFS and far more against a remote bucket, and a plan paid
// that for every leaf it read. Opening an S3 object already starts a GET
// of all of it; reading that stream to the end is one round trip.
func manifestSource(f icebergio.File, whole bool) (parquet.ReaderAtSeeker, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if !whole && size > wholeManifestBytes {
		return f, nil
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("reading %d bytes: %w", size, err)
	}
	return bytes.NewReader(data), nil
}

// Parsed manifest footers are cached by location (manifests are never
// rewritten in place): a wide table's leaf is read by a plan and again by
// the column commit that follows it, and parsing its footer of hundreds of
// column chunks is milliseconds each time. Only footers up to
// maxCachedFooterBytes (as stored) are kept, so the cache stays within a
// few tens of megabytes however large the manifests.
const (
	maxCachedFooters     = 32
	maxCachedFooterBytes = 256 << 10
)

// LegacyManifestList reports whether a snapshot's manifest list is a
// v1–v3 Avro manifest list rather than a v4 root. Every writer (Java,
// PyIceberg, iceberg-go) names manifest lists *.avro; this server names v4
// roots *.parquet.
func LegacyManifestList(loc string) bool {
	return strings.HasSuffix(strings.ToLower(loc), ".avro")
}

// ErrLegacySnapshot is the 400 for a v4 operation that needs a v4 root
// but met the Avro manifest list (named name) of a snapshot older than the
// upgrade.
func ErrLegacySnapshot(name string) error {
	return fault.New(fault.BadRequest, "Manifest list %s is a format v1-v3 (Avro) manifest list: its snapshot predates the table's upgrade to format version 4, and this operation needs a v4 snapshot. Commit `upgrade-format-version: 4` again to convert the current snapshot", name)
}
