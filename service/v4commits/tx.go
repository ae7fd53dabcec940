package v4commits

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/commitjobs"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// Tx is one attempt of a v4 snapshot commit being built: the new
// snapshot's ids and the files written.
type Tx struct {
	cm     *Committer
	w      *store.Warehouse
	st     *State
	a      *commitengine.Attempt
	snapID int64
	seq    int64
	uuid   string
	leafN  int
	// lineages are the base-file index lineages of the root's live data
	// leaves, when a base lookup read them.
	lineages map[string]string
}

// NewTx starts one attempt of a v4 snapshot commit on st, staging into a.
func (cm *Committer) NewTx(w *store.Warehouse, st *State, a *commitengine.Attempt) *Tx {
	return &Tx{cm: cm, w: w, st: st, a: a, snapID: NewSnapshotID(), seq: st.meta.LastSequenceNumber() + 1, uuid: uuid.NewString()}
}

// nextLeaf names the next leaf manifest this attempt writes.
func (t *Tx) nextLeaf() string {
	loc := fmt.Sprintf("%s/metadata/%s-m%d.parquet", t.st.location, t.uuid, t.leafN)
	t.leafN++
	return loc
}

// Snapshot is what the tree rewrite needs to know of this attempt.
func (t *Tx) Snapshot() v4tree.Snapshot {
	return v4tree.Snapshot{ID: t.snapID, SequenceNumber: t.seq, TableLocation: t.st.location, LeafLocation: t.nextLeaf,
		Name: func(loc string) string { return locations.FileName(t.w, t.st.location, loc) }}
}

// leafReader reads the leaves of t's table for the tree rewrite.
func (cm *Committer) leafReader(ctx context.Context, t *Tx) v4tree.LeafReader {
	return func(rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
		return cm.readers.Leaf(ctx, t.w, t.st.location, rr, cols)
	}
}

// engineErr maps an error of the tree rewrite: a bad request is a 400; a
// rejection with a reason (*validation.Error, for validationErr to map
// once its paths are made relative) and a service error (from the leaf
// reader) stay as they are; anything else is internal.
func engineErr(err error) error {
	var re *v4tree.RequestError
	var ve *validation.Error
	var se *fault.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return fault.New(fault.BadRequest, "%s", re.Message)
	case errors.As(err, &ve), errors.As(err, &se):
		return err
	}
	return fault.Wrap(fault.Internal, err, "rewrite the manifest tree")
}

// writeLeaves writes the new leaves of res and records their sizes in its
// root. A write failure is a 409: nothing is committed yet.
func (cm *Committer) writeLeaves(ctx context.Context, t *Tx, res *v4tree.Result) error {
	for i, l := range res.Leaves {
		size, err := cm.writeManifest(ctx, t.w, t.st, l.Location, l.Content, l.Rows)
		if err != nil {
			return err
		}
		t.a.AddFile(l.Location)
		res.SetLeafSize(i, size)
	}
	return nil
}

// StageSnapshot writes the new leaves and root manifest of res and the
// metadata file that adds the snapshot as the head of main (its summary
// with the table totals, addTotals), and stages the pointer swap. The
// metadata names the root by location only, so it is built while the
// manifests are encoded: each is a few milliseconds of one core. Errors:
// 409 (503 when storage is unavailable) when a manifest cannot be written,
// the metadata check's 400 ValidationException, 500 when it cannot be
// built, the base-file index's store errors.
func (cm *Committer) StageSnapshot(ctx context.Context, t *Tx, res *v4tree.Result) (*Result, error) {
	st := t.st
	cm.addTotals(ctx, t, res)
	rootLoc := fmt.Sprintf("%s/metadata/snap-%d-%s.parquet", st.location, t.snapID, t.uuid)
	var meta table.Metadata
	var enc *tableaccess.Encoded
	var g errgroup.Group
	g.Go(func() (err error) {
		meta, enc, err = cm.snapshotMetadata(t, res, rootLoc)
		return err
	})
	treeErr := cm.writeTree(ctx, t, res, rootLoc)
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if treeErr != nil {
		return nil, treeErr
	}
	index, err := cm.newLeafIndex(ctx, t, res)
	if err != nil {
		return nil, err
	}
	metaLoc, newLoc, err := cm.d.Tables.WriteNextMetadata(ctx, t.w, st.obj, st.location, meta.Properties(), enc.Data)
	if err != nil {
		return nil, err
	}
	t.a.AddFile(metaLoc)
	t.a.Swaps = []store.Swap{{ObjectID: st.obj.ID, ExpectedMetadataLocation: st.obj.MetadataLocation,
		NewMetadataLocation: metaLoc, NewMetadata: enc.Data, NewFormatVersion: FormatV4, NewLocation: newLoc,
		NewRefsMetadata: enc.Refs, Index: index}}
	// Listed only when an orphan-file removal holds the table.
	t.a.ListAdds = func(context.Context, int) ([]string, error) { return addedFiles(st.location, res), nil }
	id := ident.Ident{Namespace: st.obj.Namespace, Name: st.obj.Name}
	t.a.Jobs = commitjobs.For(cm.d.Tables.Now(), t.w, id, st.meta, meta, metaLoc)
	t.a.Events = nil
	cm.d.Tables.AddEvent(t.a, func() store.Event {
		return changeevents.Update(tableaccess.TableObject(t.w.Name, id, meta), tableaccess.Who(ctx), changeevents.SnapshotUpdates(meta), nil)
	})
	if enc.Entry != nil {
		t.a.Landed = func(context.Context) { cm.d.Tables.CacheMeta(metaLoc, enc.Entry) }
	}
	return &Result{MetadataLocation: metaLoc, Metadata: enc.Data}, nil
}

// writeTree writes the new leaves of res, then its root at rootLoc (the
// root records the leaves' sizes), and caches the root's rows.
func (cm *Committer) writeTree(ctx context.Context, t *Tx, res *v4tree.Result, rootLoc string) error {
	if err := cm.writeLeaves(ctx, t, res); err != nil {
		return err
	}
	if _, err := cm.writeManifest(ctx, t.w, t.st, rootLoc, v4manifest.ContentRoot, res.Root); err != nil {
		return err
	}
	t.a.AddFile(rootLoc)
	cm.readers.RememberRoot(rootLoc, t.st.location, res.Root)
	return nil
}

// commitMillis is the timestamp of a snapshot the catalog writes: now,
// but never before the table's last update, so that the snapshot log stays
// in commit order when replicas' clock estimates differ slightly.
func commitMillis(now time.Time, prev table.Metadata) int64 {
	return max(now.UnixMilli(), prev.LastUpdatedMillis())
}

// snapshotMetadata builds and checks the table metadata that adds res's
// snapshot (root manifest rootLoc) as the head of main, and encodes it,
// through the same light build and spliced encoding as every commit.
// Errors: the check's 400 ValidationException, else 500.
func (cm *Committer) snapshotMetadata(t *Tx, res *v4tree.Result, rootLoc string) (table.Metadata, *tableaccess.Encoded, error) {
	st := t.st
	firstRowID := st.meta.NextRowID()
	snap := &table.Snapshot{
		SnapshotID: t.snapID, SequenceNumber: t.seq, TimestampMs: commitMillis(cm.d.Tables.Now(), st.meta), ManifestList: rootLoc,
		Summary: &table.Summary{Operation: res.Operation, Properties: res.Summary}, SchemaID: ptrTo(st.meta.CurrentSchema().ID),
		FirstRowID: &firstRowID, AddedRows: ptrTo(res.AddedRows),
	}
	if cur := st.meta.CurrentSnapshot(); cur != nil {
		snap.ParentSnapshotID = ptrTo(cur.SnapshotID)
	}
	ups := table.Updates{
		table.NewAddSnapshotUpdate(snap),
		table.NewSetSnapshotRefUpdate(table.MainBranch, snap.SnapshotID, table.BranchRef, -1, -1, -1),
	}
	info := []tablemeta.UpdateInfo{{Action: table.UpdateAddSnapshot}, {Action: table.UpdateSetSnapshotRef, RefName: table.MainBranch, SnapshotID: &snap.SnapshotID}}
	info[0].Snapshot = &struct {
		SnapshotID int64 `json:"snapshot-id"`
	}{snap.SnapshotID}
	meta, _, err := tablemeta.Build(st.entry, st.obj.MetadataLocation, false, ups, info)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "build metadata")
	}
	enc, err := cm.d.Tables.Encode(st.entry, meta, FormatV4)
	if err != nil {
		return nil, nil, err
	}
	if err := enc.Check(); err != nil {
		return nil, nil, err
	}
	return meta, enc, nil
}
