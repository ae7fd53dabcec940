package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lakehold/catalog/service/commitengine"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4commit"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// v4Tx is one attempt of a v4 snapshot commit being built: the new
// snapshot's ids and the files written.
type v4Tx struct {
	w      *store.Warehouse
	st     *v4State
	a      *commitengine.Attempt
	snapID int64
	seq    int64
	uuid   string
	leafN  int
	// lineages are the base-file index lineages of the root's live data
	// leaves, when a base lookup read them.
	lineages map[string]string
}

func (s *Service) newV4Tx(w *store.Warehouse, st *v4State, a *commitengine.Attempt) *v4Tx {
	return &v4Tx{w: w, st: st, a: a, snapID: newSnapshotID(), seq: st.meta.LastSequenceNumber() + 1, uuid: uuid.NewString()}
}

// nextLeaf names the next leaf manifest this attempt writes.
func (t *v4Tx) nextLeaf() string {
	loc := fmt.Sprintf("%s/metadata/%s-m%d.parquet", t.st.location, t.uuid, t.leafN)
	t.leafN++
	return loc
}

// snapshot is what the tree rewrite needs to know of this attempt.
func (t *v4Tx) snapshot() v4commit.Snapshot {
	return v4commit.Snapshot{ID: t.snapID, SequenceNumber: t.seq, TableLocation: t.st.location, LeafLocation: t.nextLeaf,
		Name: func(loc string) string { return fileName(t.w, t.st.location, loc) }}
}

// leafReader reads the leaves of t's table for the tree rewrite.
func (s *Service) leafReader(ctx context.Context, t *v4Tx) v4commit.LeafReader {
	return func(rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
		return s.readers.Leaf(ctx, t.w, t.st.location, rr, cols)
	}
}

// engineErr maps an error of the tree rewrite: a bad request is a 400; a
// rejection with a reason (*validation.Error, for validationErr to map
// once its paths are made relative) and a service error (from the leaf
// reader) stay as they are; anything else is internal.
func engineErr(err error) error {
	var re *v4commit.RequestError
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
func (s *Service) writeLeaves(ctx context.Context, t *v4Tx, res *v4commit.Result) error {
	for i, l := range res.Leaves {
		size, err := s.writeManifest(ctx, t.w, t.st, l.Location, l.Content, l.Rows)
		if err != nil {
			return err
		}
		t.a.AddFile(l.Location)
		res.SetLeafSize(i, size)
	}
	return nil
}

// stageV4Snapshot writes the new leaves and root manifest of res and the
// metadata file that adds the snapshot as the head of main (its summary
// with the table totals, addTotals), and stages the pointer swap. The
// metadata names the root by location only, so it is built while the
// manifests are encoded: each is a few milliseconds of one core.
func (s *Service) stageV4Snapshot(ctx context.Context, t *v4Tx, res *v4commit.Result) (*TableResult, error) {
	st := t.st
	s.addTotals(ctx, t, res)
	rootLoc := fmt.Sprintf("%s/metadata/snap-%d-%s.parquet", st.location, t.snapID, t.uuid)
	var meta table.Metadata
	var enc *encodedChange
	var g errgroup.Group
	g.Go(func() (err error) {
		meta, enc, err = s.snapshotMetadata(t, res, rootLoc)
		return err
	})
	treeErr := s.writeTree(ctx, t, res, rootLoc)
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if treeErr != nil {
		return nil, treeErr
	}
	index, err := s.newLeafIndex(ctx, t, res)
	if err != nil {
		return nil, err
	}
	metaLoc, newLoc, err := s.writeNextMetadata(ctx, t.w, st.obj, st.location, meta.Properties(), enc.data)
	if err != nil {
		return nil, err
	}
	t.a.AddFile(metaLoc)
	t.a.Swaps = []store.Swap{{ObjectID: st.obj.ID, ExpectedMetadataLocation: st.obj.MetadataLocation,
		NewMetadataLocation: metaLoc, NewMetadata: enc.data, NewFormatVersion: FormatV4, NewLocation: newLoc,
		NewRefsMetadata: enc.refs, Index: index}}
	id := Ident{Namespace: st.obj.Namespace, Name: st.obj.Name}
	t.a.Jobs = s.commitJobs(t.w, id, st.meta, meta, metaLoc)
	t.a.Events = nil
	s.addEvent(t.a, func() store.Event {
		return changeevents.Update(tableObject(t.w.Name, id, meta), who(ctx), changeevents.SnapshotUpdates(meta), nil)
	})
	if enc.entry != nil {
		t.a.Landed = func(context.Context) { s.metaCache.Add(metaLoc, enc.entry) }
	}
	return &TableResult{MetadataLocation: metaLoc, Metadata: enc.data, Config: map[string]string{}}, nil
}

// writeTree writes the new leaves of res, then its root at rootLoc (the
// root records the leaves' sizes), and caches the root's rows.
func (s *Service) writeTree(ctx context.Context, t *v4Tx, res *v4commit.Result, rootLoc string) error {
	if err := s.writeLeaves(ctx, t, res); err != nil {
		return err
	}
	if _, err := s.writeManifest(ctx, t.w, t.st, rootLoc, v4manifest.ContentRoot, res.Root); err != nil {
		return err
	}
	t.a.AddFile(rootLoc)
	s.readers.RememberRoot(rootLoc, t.st.location, res.Root)
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
func (s *Service) snapshotMetadata(t *v4Tx, res *v4commit.Result, rootLoc string) (table.Metadata, *encodedChange, error) {
	st := t.st
	firstRowID := st.meta.NextRowID()
	snap := &table.Snapshot{
		SnapshotID: t.snapID, SequenceNumber: t.seq, TimestampMs: commitMillis(s.now(), st.meta), ManifestList: rootLoc,
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
	enc, err := s.encodeChange(st.entry, meta, FormatV4)
	if err != nil {
		return nil, nil, err
	}
	if err := enc.check(); err != nil {
		return nil, nil, err
	}
	return meta, enc, nil
}
