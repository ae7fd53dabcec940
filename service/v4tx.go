package service

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// v4Tx is one attempt of a v4 snapshot commit being built: the new
// snapshot's ids, the root rows gathered so far and the files written.
type v4Tx struct {
	w       *store.Warehouse
	st      *v4State
	a       *attempt
	snapID  int64
	seq     int64
	uuid    string
	leafN   int
	newRoot []v4manifest.TrackedFile
}

func (s *Service) newV4Tx(w *store.Warehouse, st *v4State, a *attempt) *v4Tx {
	return &v4Tx{
		w: w, st: st, a: a, snapID: newSnapshotID(), seq: st.meta.LastSequenceNumber() + 1, uuid: uuid.NewString(),
		newRoot: make([]v4manifest.TrackedFile, 0, len(st.rootRows)+2),
	}
}

// nextLeaf names the next leaf manifest this attempt writes.
func (t *v4Tx) nextLeaf() string {
	loc := fmt.Sprintf("%s/metadata/%s-m%d.parquet", t.st.location, t.uuid, t.leafN)
	t.leafN++
	return loc
}

// carry copies a live root row, unchanged, into the new root.
func (t *v4Tx) carry(rr v4manifest.TrackedFile) error {
	cf, err := v4manifest.CarryForward(rr)
	if err != nil {
		return wrapErr(KindInternal, err, "carry forward a root row")
	}
	t.newRoot = append(t.newRoot, cf)
	return nil
}

// addLeaf writes rows as a new leaf of the given content and adds its root
// row. A write failure is a 409: nothing is committed yet.
func (s *Service) addLeaf(ctx context.Context, t *v4Tx, content v4manifest.Content, rows []v4manifest.TrackedFile, firstRowID *int64) error {
	loc := t.nextLeaf()
	size, err := s.writeManifest(ctx, t.w, t.st, loc, content, rows)
	if err != nil {
		return err
	}
	t.a.addFile(loc)
	row, err := manifestRow(loc, rows, size, t.snapID, t.seq, firstRowID)
	if err != nil {
		return err
	}
	if content == v4manifest.ContentDeleteLeaf {
		row.ContentType = v4manifest.ContentDeleteManifest
	}
	t.newRoot = append(t.newRoot, row)
	return nil
}

// replaceLeaf retires leaf root row old (DELETED in this snapshot) and adds
// a rewritten leaf holding rows in its place.
func (s *Service) replaceLeaf(ctx context.Context, t *v4Tx, old v4manifest.TrackedFile, rows []v4manifest.TrackedFile) error {
	content := v4manifest.ContentDataLeaf
	if old.ContentType == v4manifest.ContentDeleteManifest {
		content = v4manifest.ContentDeleteLeaf
	}
	gone := old
	gone.Tracking.Status = v4manifest.StatusDeleted
	gone.Tracking.SnapshotID = ptrTo(t.snapID)
	t.newRoot = append(t.newRoot, gone)
	return s.addLeaf(ctx, t, content, rows, nil)
}

// manifestRow is the root row of a leaf written in this commit.
func manifestRow(loc string, rows []v4manifest.TrackedFile, size, snapID, seq int64, firstRowID *int64) (v4manifest.TrackedFile, error) {
	mi := v4manifest.ComputeManifestInfo(rows)
	stats, err := v4manifest.AggregateStats(rows)
	if err != nil {
		return v4manifest.TrackedFile{}, wrapErr(KindInternal, err, "aggregate leaf stats")
	}
	return v4manifest.TrackedFile{
		Tracking: v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snapID), SequenceNumber: ptrTo(seq),
			FileSequenceNumber: ptrTo(seq), FirstRowID: firstRowID},
		ContentType: v4manifest.ContentDataManifest, FormatVersion: FormatV4, Location: loc, FileFormat: "parquet",
		RecordCount: int64(len(rows)), FileSizeInBytes: size, ManifestInfo: &mi, ContentStats: stats,
	}, nil
}

// stageV4Snapshot writes the root manifest and the metadata file that adds
// the snapshot as the head of main, and stages the pointer swap.
func (s *Service) stageV4Snapshot(ctx context.Context, t *v4Tx, op table.Operation, summary iceberg.Properties, firstRowID, addedRows *int64) (*TableResult, error) {
	st := t.st
	rootLoc := fmt.Sprintf("%s/metadata/snap-%d-%s.parquet", st.location, t.snapID, t.uuid)
	if _, err := s.writeManifest(ctx, t.w, st, rootLoc, v4manifest.ContentRoot, t.newRoot); err != nil {
		return nil, err
	}
	t.a.addFile(rootLoc)
	snap := &table.Snapshot{
		SnapshotID: t.snapID, SequenceNumber: t.seq, TimestampMs: time.Now().UnixMilli(), ManifestList: rootLoc,
		Summary: &table.Summary{Operation: op, Properties: summary}, SchemaID: ptrTo(st.meta.CurrentSchema().ID),
		FirstRowID: firstRowID, AddedRows: addedRows,
	}
	if cur := st.meta.CurrentSnapshot(); cur != nil {
		snap.ParentSnapshotID = ptrTo(cur.SnapshotID)
	}
	b, err := table.MetadataBuilderFromBase(st.meta, st.obj.MetadataLocation)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "metadata builder")
	}
	if err := b.AddSnapshot(snap); err != nil {
		return nil, wrapErr(KindInternal, err, "add snapshot")
	}
	if err := b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef); err != nil {
		return nil, wrapErr(KindInternal, err, "set main")
	}
	meta, err := b.Build()
	if err != nil {
		return nil, wrapErr(KindInternal, err, "build metadata")
	}
	data, err := marshalTableMetadata(meta, FormatV4)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "encode metadata")
	}
	if err := s.checkNewMetadata(st.meta, meta, data); err != nil {
		return nil, err
	}
	metaLoc, newLoc, err := s.writeNextMetadata(ctx, t.w, st.obj, st.location, meta.Properties(), data)
	if err != nil {
		return nil, err
	}
	t.a.addFile(metaLoc)
	t.a.swaps = []store.Swap{{ObjectID: st.obj.ID, ExpectedMetadataLocation: st.obj.MetadataLocation,
		NewMetadataLocation: metaLoc, NewMetadata: data, NewFormatVersion: FormatV4, NewLocation: newLoc,
		NewRefsMetadata: refsDocument(meta, data)}}
	return &TableResult{MetadataLocation: metaLoc, Metadata: data, Config: map[string]string{}}, nil
}
