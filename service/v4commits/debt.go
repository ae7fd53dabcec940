package v4commits

import (
	"cmp"
	"context"
	"slices"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// DebtMeasureLimit bounds the bases whose footers one debt reading opens:
// the manifests give the counts of a table of any size for the price of a
// plan, but retired bytes cost a footer read per file.
const DebtMeasureLimit = 32

// ColumnFileDebt is what compaction would work down at one snapshot.
type ColumnFileDebt struct {
	SnapshotID *int64
	// Bases counts the live base data files with column files, ColumnFiles
	// their live column files, MaxPerBase the most any one base has.
	Bases, ColumnFiles, MaxPerBase int
	// Measured counts the bases (with column files or a deletion vector,
	// the most column files first) whose footers were read; RetiredBytes
	// are their bytes no read uses (compact.Retired) and MeasuredBytes
	// their own file sizes.
	Measured      int
	RetiredBytes  int64
	MeasuredBytes int64
	// Candidates counts the measured bases Thresholds would pick.
	Candidates int
	Thresholds compact.Thresholds
}

// ColumnFileDebt reads a v4 table's column-file debt at a snapshot (the
// current one when snapshotID is nil). It needs table-read-metadata, as
// loading the table does: 403 when denied, 404 for an unknown warehouse,
// table or snapshot, 400 (table-not-v4) for another format version, 500
// when a manifest or a measured file's footer cannot be read. A threshold
// property that does not parse counts as its default here (planning
// refuses it).
func (cm *Committer) ColumnFileDebt(ctx context.Context, warehouse string, id ident.Ident, snapshotID *int64) (*ColumnFileDebt, error) {
	if err := cm.d.Tables.AuthorizeTable(ctx, access.PrivTableReadMetadata, warehouse, id); err != nil {
		return nil, err
	}
	w, err := cm.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	st, err := cm.Load(ctx, w, id)
	if err != nil {
		return nil, validationErr(err)
	}
	out := &ColumnFileDebt{}
	snap := st.meta.CurrentSnapshot()
	if snapshotID != nil {
		if snap = st.meta.SnapshotByID(*snapshotID); snap == nil {
			return nil, fault.New(fault.NotFound, "Snapshot %d does not exist in %s", *snapshotID, id)
		}
		if st.rootRows, err = cm.readers.Root(ctx, w, snap.ManifestList, st.location); err != nil {
			return nil, err
		}
	}
	if snap != nil {
		out.SnapshotID = ptrTo(snap.SnapshotID)
	}
	// ThresholdsFrom keeps the default of a property it cannot parse.
	out.Thresholds, _ = compact.ThresholdsFrom(tableaccess.WithWarehouseDefaults(w, st.meta.Properties(), compact.PropMaxFiles, compact.PropMaxRetiredRatio))
	rows, err := cm.foldableRows(ctx, w, st)
	if err != nil {
		return nil, err
	}
	countColumnFiles(out, rows)
	return out, cm.measureDebt(ctx, w, st, rows, out)
}

// countColumnFiles sets d's counts from the live rows.
func countColumnFiles(d *ColumnFileDebt, rows []v4manifest.TrackedFile) {
	for i := range rows {
		if n := len(rows[i].ColumnFiles); n > 0 {
			d.Bases++
			d.ColumnFiles += n
			d.MaxPerBase = max(d.MaxPerBase, n)
		}
	}
}

// measureDebt measures the DebtMeasureLimit bases with the most column
// files (by location among equals, so that readings of one snapshot
// agree) and adds their retired bytes to d.
func (cm *Committer) measureDebt(ctx context.Context, w *store.Warehouse, st *State, rows []v4manifest.TrackedFile, d *ColumnFileDebt) error {
	slices.SortFunc(rows, func(a, b v4manifest.TrackedFile) int {
		return cmp.Or(cmp.Compare(len(b.ColumnFiles), len(a.ColumnFiles)), cmp.Compare(a.Location, b.Location))
	})
	rows = rows[:min(len(rows), DebtMeasureLimit)]
	bases, err := cm.measureBases(ctx, w, st, rows)
	if err != nil {
		return err
	}
	d.Measured = len(bases)
	for _, b := range bases {
		d.RetiredBytes += b.Retired
		d.MeasuredBytes += b.SizeInBytes
	}
	d.Candidates = len(compact.Select(bases, d.Thresholds))
	return nil
}
