package v4read

import (
	"context"
	"fmt"
	"slices"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Root reads a root manifest, cached by location: a manifest is never
// rewritten once named, so a cached read is right on every replica. On a
// wide table the root is read on every v4 commit and plan, and its
// hundreds of stats columns cost more to decode than its few rows. The
// rows are shared: callers must not modify them (copying a row and
// changing the copy's fields is fine). Errors are those of Manifest.
func (r *Readers) Root(ctx context.Context, w *store.Warehouse, loc, tableLoc string) ([]v4manifest.TrackedFile, error) {
	key := rootKey(tableLoc, loc)
	if rows, ok := r.rootCache.Get(key); ok {
		return rows, nil
	}
	rows, err := r.Manifest(ctx, w, loc, tableLoc, nil, nil)
	if err != nil {
		return nil, err
	}
	r.rootCache.Add(key, rows)
	return rows, nil
}

// RememberRoot caches the rows of a root manifest this replica just wrote,
// as Root would read them back: the next commit or plan on the table
// then starts without decoding it. If the commit does not land, no
// snapshot ever names the location and the entry is never asked for.
func (r *Readers) RememberRoot(loc, tableLoc string, rows []v4manifest.TrackedFile) {
	r.rootCache.Add(rootKey(tableLoc, loc), slices.Clone(rows))
}

// CachedRoot returns the rows the root cache holds for the root manifest
// at loc (ok false when it holds none), without reading or touching the
// cache's order.
func (r *Readers) CachedRoot(loc, tableLoc string) (rows []v4manifest.TrackedFile, ok bool) {
	return r.rootCache.Peek(rootKey(tableLoc, loc))
}

// rootKey is a root manifest's key in the root cache: its location
// resolves against the table's.
func rootKey(tableLoc, loc string) string { return tableLoc + "|" + loc }

// Manifest reads a manifest (only the columns cols when given),
// resolving locations against tableLoc and inheriting from the root row.
// An Avro manifest list (a snapshot older than the table's upgrade to v4)
// is a 400 naming it, never parsed as a v4 root. Errors are those of
// ManifestWith.
func (r *Readers) Manifest(ctx context.Context, w *store.Warehouse, loc, tableLoc string, inherit *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
	return r.ManifestWith(ctx, w, loc, v4manifest.ReaderOptions{Columns: cols, TableLocation: tableLoc, InheritFrom: inherit})
}

// ManifestWith is Manifest with all the reader's options. It returns the
// 400 of ErrLegacySnapshot for an Avro manifest list, the file IO
// function's error, and a 500 naming the file when it cannot be opened or
// decoded.
func (r *Readers) ManifestWith(ctx context.Context, w *store.Warehouse, loc string, opts v4manifest.ReaderOptions) ([]v4manifest.TrackedFile, error) {
	tableLoc := opts.TableLocation
	if LegacyManifestList(loc) {
		return nil, ErrLegacySnapshot(r.fileName(w, tableLoc, loc))
	}
	io, err := r.fileIO(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	f, err := io.Open(ctx, loc)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "open manifest %s", r.fileName(w, tableLoc, loc))
	}
	defer f.Close()
	src, err := manifestSource(f, opts.Columns == nil)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "read manifest %s", r.fileName(w, tableLoc, loc))
	}
	opts.Footer, _ = r.footers.Get(loc)
	mr, err := v4manifest.NewReader(src, opts)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "read manifest %s", r.fileName(w, tableLoc, loc))
	}
	defer mr.Close()
	if opts.Footer == nil && mr.FooterSize() <= maxCachedFooterBytes {
		r.footers.Add(loc, mr.Footer())
	}
	rows, err := mr.All(ctx)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "read manifest %s", r.fileName(w, tableLoc, loc))
	}
	return rows, nil
}

// Leaf reads a leaf referenced by root row rr of the table at tableLoc
// with inheritance applied and the rows rr's manifest deletion vector
// masks left out, projected to the top-level columns cols (nil: all, stats
// of every field included). Errors are those of LeafView.
func (r *Readers) Leaf(ctx context.Context, w *store.Warehouse, tableLoc string, rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
	return r.LeafView(ctx, w, tableLoc, rr, View{Cols: cols})
}

// View is what a read takes from a leaf: its top-level columns Cols (nil:
// all) and, when Stats is not nil, only these table fields' stats.
type View struct {
	Cols, Stats []int
}

// NoStats is every column of a leaf but the stats: what a plan that
// returns no counts and has no filter reads.
var NoStats = View{Stats: []int{}}

// narrow reports whether v leaves out enough to be worth caching (a full
// read of a wide leaf is most of its size in memory).
func (v View) narrow() bool { return v.Cols != nil || v.Stats != nil }

// key identifies v in the leaf cache; a nil list (all) and an empty one
// (none) differ.
func (v View) key() string {
	return listKey(v.Cols) + "|" + listKey(v.Stats)
}

func listKey(ids []int) string {
	if ids == nil {
		return "all"
	}
	return fmt.Sprint(ids)
}

// withoutStats reports whether v reads no stats column.
func (v View) withoutStats() bool {
	return (v.Stats != nil && len(v.Stats) == 0) || (v.Cols != nil && !slices.Contains(v.Cols, v4manifest.IDContentStats))
}

// LeafView is Leaf for any view. Narrow reads are cached:
// manifests are immutable once written, so a cached read never goes stale
// and replicas need not agree on it; the key includes what the rows
// inherit from rr. A view without stats is also served from a cached
// NoStats read of the leaf (a plan's), which holds every other column.
// The cache holds every row, masked or not, and the mask is applied on
// the way out: a column commit changes the mask of the leaves it touches,
// and the next commit should not have to decode them again for that.
// Errors are those of ManifestWith, and a 500 for a mask that cannot be
// decoded.
func (r *Readers) LeafView(ctx context.Context, w *store.Warehouse, tableLoc string, rr *v4manifest.TrackedFile, v View) ([]v4manifest.TrackedFile, error) {
	loc := v4manifest.Resolve(tableLoc, rr.Location)
	if !v.narrow() {
		return r.Manifest(ctx, w, loc, tableLoc, rr, nil)
	}
	inherit := fmt.Sprintf("%s|%d|%d|%d|%d", loc, Deref(rr.Tracking.SnapshotID), Deref(rr.Tracking.SequenceNumber),
		Deref(rr.Tracking.FileSequenceNumber), Deref(rr.Tracking.FirstRowID))
	key := inherit + "|" + v.key()
	rows, ok := r.leafCache.Get(key)
	if !ok && v.withoutStats() {
		rows, ok = r.leafCache.Get(inherit + "|" + NoStats.key())
	}
	if !ok {
		var err error
		rows, err = r.ManifestWith(ctx, w, loc, v4manifest.ReaderOptions{Columns: v.Cols, StatsFields: v.Stats,
			TableLocation: tableLoc, InheritFrom: rr, IncludeMasked: true})
		if err != nil {
			return nil, err
		}
		r.leafCache.Add(key, rows)
	}
	masked, err := rr.MaskedPositions()
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "read manifest %s", r.fileName(w, tableLoc, loc))
	}
	if len(masked) == 0 {
		return rows, nil
	}
	live := make([]v4manifest.TrackedFile, 0, len(rows)-len(masked))
	for _, row := range rows {
		if !masked[row.Pos] {
			live = append(live, row)
		}
	}
	return live, nil
}

// DataRows are the data-file rows root row rr stands for: itself when it
// is a file in the root, its leaf's rows (projected to cols, through
// Leaf) when it is a live data manifest, none otherwise. Errors are those
// of Leaf.
func (r *Readers) DataRows(ctx context.Context, w *store.Warehouse, tableLoc string, rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
	switch {
	case !rr.Tracking.Status.Live():
		return nil, nil
	case rr.ContentType == v4manifest.ContentData:
		return []v4manifest.TrackedFile{*rr}, nil
	case rr.ContentType == v4manifest.ContentDataManifest:
		return r.Leaf(ctx, w, tableLoc, rr, cols)
	}
	return nil, nil
}

// Deref is *p, or -1 for nil (a tracking field not set).
func Deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
