package service

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakehold/catalog/v4manifest"
)

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

// planLeafReads bounds the leaf manifests one plan reads at a time.
const planLeafReads = 8

// readLeavesInOrder reads the leaves as the plan views them, up to
// planLeafReads at a time, and hands each leaf's rows to use in the order
// of leaves, as a sequential loop would: use sees leaf i only after leaf
// i-1, and the first error in that order (a read's or use's) is returned.
// At most planLeafReads leaves are read ahead of use, so the rows held at
// once stay bounded on a plan of many leaves.
func (p *scanPlanV4) readLeavesInOrder(ctx context.Context, leaves []*v4manifest.TrackedFile,
	use func(i int, rows []v4manifest.TrackedFile) error) error {
	switch len(leaves) {
	case 0:
		return nil
	case 1:
		rows, err := p.s.readLeafView(ctx, p.w, p.st, leaves[0], p.view)
		if err != nil {
			return err
		}
		return use(0, rows)
	}
	type read struct {
		rows []v4manifest.TrackedFile
		err  error
	}
	results := make([]chan read, len(leaves))
	for i := range results {
		results[i] = make(chan read, 1)
	}
	slots := make(chan struct{}, planLeafReads)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i, leaf := range leaves {
			select {
			case slots <- struct{}{}:
			case <-done:
				return
			}
			go func() {
				rows, err := p.s.readLeafView(ctx, p.w, p.st, leaf, p.view)
				results[i] <- read{rows, err}
			}()
		}
	}()
	for i := range leaves {
		r := <-results[i]
		<-slots
		if r.err != nil {
			return r.err
		}
		if err := use(i, r.rows); err != nil {
			return err
		}
	}
	return nil
}
