package tablecommit

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/storage"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// Encode serialises meta, built from prev's metadata, as format
// target: through the fast path when the format stays the same, else by
// encoding everything (and then checking by reading everything back). It
// fails only when the metadata cannot be encoded (500); the check's
// rejections are 400 ValidationExceptions. The result's Check is
// CheckNewMetadata, or its cheaper form for the fast path.
func (tc *Committer) Encode(prev *tablemeta.Entry, meta table.Metadata, target int) (*v4commits.Encoded, error) {
	if target == prev.Version && meta.Version() == prev.Meta.Version() {
		enc, ok, err := tablemeta.Encode(meta, target, prev)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "encode metadata")
		}
		if ok {
			return &v4commits.Encoded{
				Data: enc.Data, Refs: enc.Refs,
				Entry: &tablemeta.Entry{Meta: meta, Version: target, Data: enc.Data, Spans: enc.Spans, NSnaps: len(enc.Spans)},
				Check: func() error { return tc.checkEncoded(prev.Meta, meta, enc) },
			}, nil
		}
	}
	data, err := tablemeta.Marshal(meta, target)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode metadata")
	}
	return &v4commits.Encoded{
		Data: data, Refs: tablemeta.RefsDocument(meta, data),
		Check: func() error { return tc.CheckNewMetadata(prev.Meta, meta, data) },
	}, nil
}

// overlapWriteAbove is the document size from which the metadata file is
// written while the document is checked. Below it the check comes first,
// so that a rejected commit never touches storage; above it the file write
// (about 5 ms for 3.6 MB on local disk), the check and the store's
// compression each cost milliseconds, and a rejected document's file is
// deleted again.
const overlapWriteAbove = 256 << 10

// writeChecked checks enc and writes it as obj's next metadata file (meta
// says where), and prepares sw for the store; large documents do the write
// on a second goroutine meanwhile. It returns the new metadata location and
// the object's new base location ("" when unchanged); the check's
// rejections and WriteNextMetadata's errors as they are.
func (tc *Committer) writeChecked(ctx context.Context, w *store.Warehouse, obj *store.Object, meta table.Metadata, enc *v4commits.Encoded, sw *store.Swap) (metaLoc, newLoc string, err error) {
	write := func() (string, string, error) {
		return tc.WriteNextMetadata(ctx, w, obj, meta.Location(), meta.Properties(), enc.Data)
	}
	if len(enc.Data) < overlapWriteAbove {
		if err := enc.Check(); err != nil {
			return "", "", err
		}
		tc.d.Store.PrepareSwap(sw)
		return write()
	}
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				werr = fault.Wrap(fault.Internal, fmt.Errorf("panic: %v", p), "write metadata file")
			}
		}()
		metaLoc, newLoc, werr = write()
	}()
	cerr := enc.Check()
	if cerr == nil {
		tc.d.Store.PrepareSwap(sw)
	}
	<-done
	if cerr != nil {
		if werr == nil {
			tc.DeleteOrphan(ctx, w, metaLoc)
		}
		return "", "", cerr
	}
	if werr != nil {
		return "", "", werr
	}
	return metaLoc, newLoc, nil
}

// MetadataPathKey overrides where metadata files go (table and view
// property); the location policy owns the name.
const MetadataPathKey = locations.MetadataPathKey

var metadataVersion = regexp.MustCompile(`^(\d+)-[^/]*\.metadata\.json$`)

// NewMetadataLocation names the next metadata file:
// <location>/metadata/<NNNNN>-<uuid>.metadata.json (or under
// write.metadata.path), numbered one past the previous file (0 for a new
// table). It does not judge the location: FileIO refuses a write outside
// the warehouse, and WriteNextMetadata checks write.metadata.path first.
func NewMetadataLocation(loc string, props map[string]string, previous string) string {
	version := 0
	if previous != "" {
		if m := metadataVersion.FindStringSubmatch(path.Base(previous)); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				version = n + 1
			}
		}
	}
	dir := strings.TrimRight(loc, "/") + "/metadata"
	if p := props[MetadataPathKey]; p != "" {
		dir = strings.TrimRight(p, "/")
	}
	return fmt.Sprintf("%s/%05d-%s.metadata.json", dir, version, uuid.New())
}

// MsgStorageUnavailable answers a write the object store or disk could
// not do now; the argument names the file relative to its table.
const MsgStorageUnavailable = "Storage unavailable: cannot write metadata file %s, nothing was committed; retry later"

// WriteMetadataFile writes data at loc. A failure means nothing was
// committed: 503 when the store could not do it now (storage.Unavailable:
// a timeout, a cut connection, S3 answering 5xx or SlowDown, a full
// disk), else a retryable 409 on commit paths.
func (tc *Committer) WriteMetadataFile(ctx context.Context, w *store.Warehouse, loc string, data []byte) error {
	io, err := tc.d.FileIO(ctx, w, loc)
	if err != nil {
		return err
	}
	if err := io.Write(ctx, loc, data); err != nil {
		if storage.Unavailable(err) {
			return fault.Wrap(fault.Unavailable, err, MsgStorageUnavailable, tc.d.FileName(w, w.Location, loc))
		}
		return fault.Wrap(fault.Internal, err, "Failed to write metadata file %s", tc.d.FileName(w, w.Location, loc))
	}
	return nil
}

// WriteNextMetadata names and writes the metadata file that follows obj's
// current one, for a table or view whose new location and properties are
// given. It returns the new file's location and, when the object moved, its
// normalized new location ("" otherwise). 400 when the location is outside
// the warehouse or a write.*.path property outside the object's prefixes
// (location policy); a write failure is fault.Unavailable when the store
// could not do it now, else fault.CommitFailed: nothing points at the new
// file yet, so nothing was committed.
func (tc *Committer) WriteNextMetadata(ctx context.Context, w *store.Warehouse, obj *store.Object, loc string, props map[string]string, data []byte) (metaLoc, newLoc string, err error) {
	canon, err := tc.d.CheckObjectLocation(w, loc)
	if err != nil {
		return "", "", err
	}
	if canon != obj.Location {
		newLoc = canon
	}
	if err := tc.d.CheckWritePaths(w, canon, props); err != nil {
		return "", "", err
	}
	metaLoc = NewMetadataLocation(loc, props, obj.MetadataLocation)
	if err := tc.WriteMetadataFile(ctx, w, metaLoc, data); err != nil {
		switch fault.KindOf(err) {
		case fault.BadRequest:
			return "", "", err
		case fault.Unavailable:
			return "", "", fault.Wrap(fault.Unavailable, err, MsgStorageUnavailable, tc.d.FileName(w, canon, metaLoc))
		}
		return "", "", fault.Wrap(fault.CommitFailed, err, "Commit failed: cannot write metadata file %s, nothing was committed", tc.d.FileName(w, canon, metaLoc))
	}
	return metaLoc, newLoc, nil
}

// DeleteOrphan removes a metadata file that lost its commit; failures are
// only logged (an unreferenced file is harmless). FileIO keeps it inside
// the warehouse.
func (tc *Committer) DeleteOrphan(ctx context.Context, w *store.Warehouse, loc string) {
	io, err := tc.d.FileIO(ctx, w, loc)
	if err == nil {
		err = io.Delete(context.WithoutCancel(ctx), loc)
	}
	if err != nil {
		tc.d.Logger.WarnContext(ctx, "could not delete orphan metadata file", "file", tc.d.FileName(w, w.Location, loc), "error", storage.PathFree(err))
	}
}

// DeleteTableFile deletes a file of the table or view at tableLoc, only
// when it lies inside the object's prefixes (location policy); a file
// outside is logged by name and left alone. Failures are only logged.
func (tc *Committer) DeleteTableFile(ctx context.Context, w *store.Warehouse, tableLoc, loc string) {
	if !tc.d.TablePrefixes(w, tableLoc).Contains(loc) {
		tc.d.Logger.WarnContext(ctx, "left a file outside the table", "file", tc.d.FileName(w, tableLoc, loc))
		return
	}
	tc.DeleteOrphan(ctx, w, loc)
}
