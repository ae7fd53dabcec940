package v4read

import (
	"context"
	"slices"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Small leaves this replica wrote are kept as written, so that the next
// commit that needs their rows in full (a column commit reads its bases'
// rows with every field's stats) skips decoding them: on a wide table
// that decode is per column, milliseconds for a leaf of a few rows. A
// leaf of more rows is left to the reads: its decode is paid per row, and
// its rows (each with stats for every field) would crowd memory. At most
// rememberedLeaves leaves of at most maxRememberedLeafRows rows are kept.
const (
	maxRememberedLeafRows = 64
	rememberedLeaves      = 64
)

// writtenLeaf is a leaf's rows as its writer got them, and the table
// location the writer relativized them against.
type writtenLeaf struct {
	rows     []v4manifest.TrackedFile
	tableLoc string
}

// RememberLeaf keeps the rows of the leaf manifest this replica just wrote
// at loc (written with table location tableLoc) when it has at most
// maxRememberedLeafRows rows, for LeafRows. As with RememberRoot, a leaf
// whose commit does not land is never asked for. rows must not change
// afterwards.
func (r *Readers) RememberLeaf(loc, tableLoc string, rows []v4manifest.TrackedFile) {
	if len(rows) > maxRememberedLeafRows {
		return
	}
	r.written.Add(loc, writtenLeaf{rows: slices.Clone(rows), tableLoc: tableLoc})
}

// LeafRows reads the rows at positions of the leaf that root row rr of the
// table at tableLoc references, in full, as ManifestWith with InheritFrom
// rr and those Positions reads them: from what RememberLeaf kept when it
// has the leaf, else from the file. The rows share stats maps with the
// cache: callers must not modify them. Errors are those of ManifestWith,
// and a 500 for a mask that cannot be decoded.
func (r *Readers) LeafRows(ctx context.Context, w *store.Warehouse, tableLoc string, rr *v4manifest.TrackedFile, positions map[int64]bool) ([]v4manifest.TrackedFile, error) {
	loc := v4manifest.Resolve(tableLoc, rr.Location)
	opts := v4manifest.ReaderOptions{TableLocation: tableLoc, InheritFrom: rr, Positions: positions}
	if wl, ok := r.written.Get(loc); ok {
		rows, err := v4manifest.ReadBack(wl.rows, wl.tableLoc, opts)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "read manifest %s", r.fileName(w, tableLoc, loc))
		}
		return rows, nil
	}
	return r.ManifestWith(ctx, w, loc, opts)
}
