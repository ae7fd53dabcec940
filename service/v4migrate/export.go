package v4migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4export"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Exporting a v4 table (docs/column-files.md, "The way back"): the live
// files of its current snapshot are copied into a new table's location
// (locations never overlap, and vended credentials reach one table's
// files only) and described by v1–v3 Avro manifests in one snapshot;
// the new table is created under the name the caller picks. Files keep
// their sequence numbers and, in format 3, their first_row_id, so rows
// keep _row_id and _last_updated_sequence_number. Pending column files are
// refused (a v3 reader would read the base's stale columns) unless the
// caller asks for them to be folded: straight into the new table (each
// such base written once, stitched, the source unchanged), or, with
// FoldSource, by compaction commits on the source before the copy.

// ExportInput asks for the export of a v4 table's current snapshot.
type ExportInput struct {
	Source, Target ident.Ident
	// FormatVersion is the new table's: 1, 2 or 3 (0 means 3).
	FormatVersion int
	// Compact folds every base with column files (below format 3 also
	// every base with a deletion vector) into one new file of the new
	// table, written once; the source table is not changed.
	Compact bool
	// FoldSource, with Compact, folds those bases in the source table
	// instead (each in its own compaction commit), then copies the files.
	FoldSource bool
	Delegation storageaccess.Delegation
}

// exportCopiers bounds the files an export copies at once.
const exportCopiers = 4

// Export exports in.Source's current snapshot to a new table
// in.Target. It needs read-data on the source (write-data too with
// FoldSource) and create in the target's namespace. 400 ValidationException
// (reason column-files-pending, deletion-vectors-need-v3, ...) when the
// snapshot holds what the format cannot, or table-not-v4; 400 for a format
// version other than 1–3 or a schema the format cannot hold; 404 for a
// missing table or namespace; 409 when the target name is taken, or with
// Compact when a fold lost a race with another commit (other fold failures
// answer with their own status: a fold into the new table too, e.g. 400
// required-field-nulls); 503 when storage is unavailable. Nothing
// is left behind on failure: copied files are deleted unless the create's
// outcome is unknown (500).
func (m *Migrator) Export(ctx context.Context, warehouse string, in ExportInput) (*Result, error) {
	version := in.FormatVersion
	if version == 0 {
		version = 3
	}
	if version < 1 || version > 3 {
		return nil, fault.New(fault.BadRequest, "Cannot export to format version %d: a v4 table exports to format version 1, 2 or 3", in.FormatVersion)
	}
	w, ns, err := m.d.Tables.CreateTarget(ctx, warehouse, in.Target, access.PrivTableCreate)
	if err != nil {
		return nil, err
	}
	if err := m.d.Broker.CheckVend(ctx, w, in.Target, in.Delegation); err != nil {
		return nil, err
	}
	if err := m.nameFree(ctx, warehouse, in.Target); err != nil {
		return nil, err
	}
	if in.Compact && in.FoldSource {
		if err := m.compactForExport(ctx, warehouse, in.Source, version); err != nil {
			return nil, err
		}
	}
	_, st, err := m.d.V4.LoadAt(ctx, warehouse, in.Source, nil)
	if err != nil {
		return nil, err
	}
	data, eqDeletes, err := m.liveRows(ctx, w, st)
	if err != nil {
		return nil, err
	}
	rel := func(loc string) string { return locations.FileName(w, st.Location(), loc) }
	fold := foldIntoExport(in, version, data)
	if err := v4export.Check(version, afterFolds(data, fold), eqDeletes, rel); err != nil {
		return nil, exportRefused(err)
	}
	loc, canon, err := locations.NewObjectLocation(w, ns, in.Target.Name, "", nil)
	if err != nil {
		return nil, err
	}
	x := &export{m: m, w: w, st: st, version: version, loc: loc, fold: fold}
	res, err := x.run(ctx, warehouse, in, canon, data, eqDeletes)
	if err != nil {
		m.d.Engine.DropUnlanded(ctx, w, err, x.written...)
		return nil, err
	}
	return res, nil
}

// nameFree is the 409 of a create for a name already taken by a table,
// view or function, asked before copying a table's worth of files (the
// create itself checks again).
func (m *Migrator) nameFree(ctx context.Context, warehouse string, id ident.Ident) error {
	for _, k := range []store.ObjectKind{store.KindTable, store.KindView, store.KindFunction} {
		if _, err := m.d.Tables.Store().ObjectMetadataLocation(ctx, objRef(id, warehouse, k)); err == nil {
			return tableaccess.AlreadyExists(&store.AlreadyExistsError{Kind: k}, store.KindTable, id)
		}
	}
	return nil
}

// compactForExport folds every base of id with column files (below format
// 3 also every base with a deletion vector), each in its own compaction
// commit. A failed fold is returned with its own status, reason and
// details: the folds that landed changed no row, and nothing is exported.
func (m *Migrator) compactForExport(ctx context.Context, warehouse string, id ident.Ident, version int) error {
	th := compact.FoldAll(version < 3) // below 3, deletion vectors go too
	rep, err := m.d.V4.Compact(ctx, warehouse, id, v4commits.CompactOptions{Thresholds: &th})
	if err != nil {
		return err
	}
	for _, f := range rep.Folds {
		if err := f.Err(); err != nil {
			e := fault.Wrap(fault.KindOf(err), err, "Cannot export %s: folding %s first failed: %s; nothing was exported",
				id, f.DataFile, f.Error)
			var fe *fault.Error
			if errors.As(err, &fe) {
				// The fold's reason (required-field-nulls, fold-mismatch, ...) stays.
				e.Reason, e.Details = fe.Reason, fe.Details
			}
			return e
		}
	}
	return nil
}

// exportRefused turns a v4export refusal into a 400 with its reason.
func exportRefused(err error) error {
	var ue *v4export.UnsupportedError
	if !errors.As(err, &ue) {
		return err
	}
	e := fault.New(fault.Validation, "%s", strings.ToUpper(ue.Error()[:1])+ue.Error()[1:])
	e.Reason = ue.Reason
	e.Details = map[string]any{"count": ue.Count}
	if ue.Example != "" {
		e.Details["example"] = ue.Example
	}
	return e
}

// liveRows reads the live data and equality-delete rows of st's current
// snapshot, every column and stat, locations resolved.
func (m *Migrator) liveRows(ctx context.Context, w *store.Warehouse, st *v4commits.State) (data, eqDeletes []v4manifest.TrackedFile, err error) {
	root := st.RootRows()
	for i := range root {
		rr := &root[i]
		if !rr.Tracking.Status.Live() {
			continue
		}
		rows := []v4manifest.TrackedFile{*rr}
		if rr.ContentType == v4manifest.ContentDataManifest || rr.ContentType == v4manifest.ContentDeleteManifest {
			if rows, err = m.d.Readers.Leaf(ctx, w, st.Location(), rr, nil); err != nil {
				return nil, nil, err
			}
		}
		for _, r := range rows {
			if !r.Tracking.Status.Live() {
				continue
			}
			r.Location = v4manifest.Resolve(st.Location(), r.Location)
			if r.DeletionVector != nil {
				dv := *r.DeletionVector
				dv.Location = v4manifest.Resolve(st.Location(), dv.Location)
				r.DeletionVector = &dv
			}
			switch r.ContentType {
			case v4manifest.ContentData:
				data = append(data, r)
			case v4manifest.ContentEqualityDeletes:
				eqDeletes = append(eqDeletes, r)
			}
		}
	}
	return data, eqDeletes, nil
}

// export is one export's state: what it wrote, for the clean-up.
type export struct {
	m       *Migrator
	w       *store.Warehouse
	st      *v4commits.State
	version int
	loc     string
	written []string
	// fold marks the data rows folded into the new table, not copied.
	fold []bool
}

// run copies the files, writes the manifests, manifest list and metadata
// and creates the table.
func (x *export) run(ctx context.Context, warehouse string, in ExportInput, canon string, data, eqDeletes []v4manifest.TrackedFile) (*Result, error) {
	d := &x.m.d
	md, err := x.metadata(ctx, data, eqDeletes)
	if err != nil {
		return nil, err
	}
	meta, _, err := tablemeta.Parse(md)
	if err != nil {
		// The schema may use types or defaults the format has not.
		return nil, fault.Wrap(fault.BadRequest, err, "Cannot export %s to format version %d: %s", in.Source, x.version, fault.ClientText(err))
	}
	if err := d.Tables.CheckNewMetadata(nil, meta, md); err != nil {
		return nil, err
	}
	metaLoc := tableaccess.NewMetadataLocation(x.loc, meta.Properties(), "")
	if err := x.write(ctx, metaLoc, md); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: in.Target.Namespace, Name: in.Target.Name, Kind: store.KindTable,
		Location: canon, MetadataLocation: metaLoc, Metadata: md, FormatVersion: x.version,
	}
	if refs, err := tablemeta.RefsOnly(md); err == nil {
		obj.RefsMetadata = refs
	}
	ectx := d.Tables.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateTable, tableaccess.TableObject(warehouse, in.Target, meta), tableaccess.Who(ctx), nil)
	})
	if err := d.Tables.Store().ObjectCreate(ectx, obj); err != nil {
		return nil, tableaccess.PutErr(err, store.KindTable, in.Target, warehouse)
	}
	// The files are the new table's now: an error after this point (the
	// grant's 503) must not send them to the clean-up.
	x.written = nil
	cfg, creds, err := d.Broker.Grant(ctx, x.w, in.Target, metaLoc, md, canon, in.Delegation)
	if err != nil {
		return nil, err
	}
	return &Result{MetadataLocation: metaLoc, Metadata: md, Config: cfg, StorageCredentials: creds}, nil
}

// metadata copies the files and writes the manifests and manifest list of
// the exported snapshot, and returns the new table's metadata document. A
// source without a snapshot exports as a table without one.
func (x *export) metadata(ctx context.Context, data, eqDeletes []v4manifest.TrackedFile) ([]byte, error) {
	st := x.st
	t := v4export.Table{FormatVersion: x.version, UUID: uuid.NewString(), Location: x.loc, TimestampMS: x.m.d.Tables.Now().UnixMilli(),
		SequenceNumber: st.Metadata().LastSequenceNumber(), NextRowID: st.Metadata().NextRowID()}
	if st.Metadata().CurrentSnapshot() != nil {
		if err := x.copyFiles(ctx, data, eqDeletes); err != nil {
			return nil, err
		}
		snapID, tag := v4commits.NewSnapshotID(), uuid.NewString()
		metaDir := strings.TrimRight(x.loc, "/") + "/metadata/"
		out, err := v4export.Build(v4export.Input{FormatVersion: x.version, Schema: st.Metadata().CurrentSchema(), Specs: st.Metadata().PartitionSpecs(),
			SnapshotID: snapID, SequenceNumber: st.Metadata().LastSequenceNumber(), FirstRowID: st.Metadata().NextRowID(),
			Data: data, EqualityDeletes: eqDeletes,
			ManifestLocation: func(n int) string { return fmt.Sprintf("%s%s-m%d.avro", metaDir, tag, n) }})
		if err != nil {
			return nil, exportRefused(fault.Wrap(fault.Internal, err, "build the exported manifests"))
		}
		listLoc := fmt.Sprintf("%ssnap-%d-1-%s.avro", metaDir, snapID, tag)
		for _, f := range append(out.Manifests, v4export.File{Location: listLoc, Data: out.ManifestList}) {
			if err := x.write(ctx, f.Location, f.Data); err != nil {
				return nil, err
			}
		}
		t.SnapshotID, t.ManifestList, t.Snapshot = snapID, listLoc, out
	}
	md, err := v4export.Metadata(st.Entry().Data, t)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "build the exported metadata")
	}
	return md, nil
}

// write writes one file of the new table and records it for the clean-up.
func (x *export) write(ctx context.Context, loc string, data []byte) error {
	x.written = append(x.written, loc)
	return x.m.d.Tables.WriteFile(ctx, x.w, loc, data)
}

// copyFiles copies every data and equality-delete file into the new
// table's location (exportCopiers at a time), writes the deletion vectors
// into new Puffin files there (rewriteDVs), and points the rows at the
// copies.
func (x *export) copyFiles(ctx context.Context, data, eqDeletes []v4manifest.TrackedFile) error {
	var srcs, dsts []string
	move := func(loc *string) {
		d := x.dest(*loc)
		srcs, dsts = append(srcs, *loc), append(dsts, d)
		*loc = d
	}
	if err := x.foldRows(ctx, data); err != nil {
		return err
	}
	for i := range data {
		if !x.fold[i] {
			move(&data[i].Location)
		}
	}
	for i := range eqDeletes {
		move(&eqDeletes[i].Location)
	}
	x.written = append(x.written, dsts...)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(exportCopiers)
	for i := range srcs {
		g.Go(func() error { return x.copy(gctx, srcs[i], dsts[i]) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return x.rewriteDVs(ctx, data)
}

// rewriteDVs writes the deletion vectors of data (rows already pointing at
// their copies) into new Puffin files, one per source Puffin file at its
// relative path, each blob naming its data file's copy, and points the
// rows at them. Blobs are read by their range; exportCopiers files at a
// time.
func (x *export) rewriteDVs(ctx context.Context, data []v4manifest.TrackedFile) error {
	bySrc := map[string][]int{}
	var order []string
	for i := range data {
		if d := data[i].DeletionVector; d != nil {
			if _, ok := bySrc[d.Location]; !ok {
				order = append(order, d.Location)
			}
			bySrc[d.Location] = append(bySrc[d.Location], i)
		}
	}
	dsts := make([]string, len(order))
	for i, src := range order {
		dsts[i] = x.dest(src)
	}
	x.written = append(x.written, dsts...)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(exportCopiers)
	for i, src := range order {
		g.Go(func() error { return x.rewritePuffin(gctx, src, dsts[i], data, bySrc[src]) })
	}
	return g.Wait()
}

// rewritePuffin writes the deletion vectors of rows (indexes into data)
// that live in Puffin file src into a new Puffin file dst.
func (x *export) rewritePuffin(ctx context.Context, src, dst string, data []v4manifest.TrackedFile, rows []int) error {
	io, err := x.m.d.Tables.FileIO(ctx, x.w, src)
	if err != nil {
		return err
	}
	f, err := io.Open(ctx, src)
	if err != nil {
		return x.copyErr(err, src)
	}
	defer f.Close()
	dvs := make([]v4export.DV, len(rows))
	for i, r := range rows {
		d := data[r].DeletionVector
		if d.SizeInBytes > v4commits.MaxDVBlob {
			return fault.New(fault.Internal, "cannot export the deletion vector of %s: larger than the server reads", x.name(src))
		}
		blob := make([]byte, d.SizeInBytes)
		if _, err := f.ReadAt(blob, d.Offset); err != nil {
			return x.copyErr(err, src)
		}
		dvs[i] = v4export.DV{Blob: blob, Cardinality: d.Cardinality, ReferencedDataFile: data[r].Location}
	}
	out, placed, err := v4export.PuffinOfDVs(dvs)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "write the exported deletion vectors of %s", x.name(src))
	}
	if err := x.m.d.Tables.WriteFile(ctx, x.w, dst, out); err != nil {
		return err
	}
	for i, r := range rows {
		dv := *data[r].DeletionVector
		dv.Location, dv.Offset, dv.SizeInBytes = dst, placed[i].Offset, placed[i].Length
		data[r].DeletionVector = &dv
	}
	return nil
}

// dest is where source file src lands in the new table: at the same path
// relative to the table when it lies inside the source table, under data/
// with a unique prefix otherwise.
func (x *export) dest(src string) string {
	rel := v4manifest.Relativize(x.st.Location(), src)
	if rel == src {
		rel = "data/exported-" + uuid.NewString()[:8] + "-" + path.Base(src)
	}
	return strings.TrimRight(x.loc, "/") + "/" + rel
}

// copy copies one file (errors: copyErr; a missing source is a 500, the
// table's metadata naming a file that is gone).
func (x *export) copy(ctx context.Context, src, dst string) error {
	if !locations.TablePrefixes(x.w, x.loc).Contains(dst) {
		return fault.New(fault.Internal, "exported file %s would land outside the new table", path.Base(dst))
	}
	io, err := x.m.d.Tables.FileIO(ctx, x.w, src)
	if err != nil {
		return err
	}
	if err := io.Copy(ctx, src, dst); err != nil {
		return x.copyErr(err, src)
	}
	return nil
}

// copyErr is the error of reading or copying src: 503 when storage is
// unavailable, else 500 naming src relative to the source table.
func (x *export) copyErr(err error, src string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fault.Wrap(fault.Internal, err, "Cannot export %s: the file is missing", x.name(src))
	case storage.Unavailable(err):
		return fault.Wrap(fault.Unavailable, err, msgStorageUnavailable, x.name(src))
	}
	return fault.Wrap(fault.Internal, err, "Failed to copy %s into the exported table", x.name(src))
}

// name is src relative to the source table, for a message.
func (x *export) name(src string) string { return locations.FileName(x.w, x.st.Location(), src) }

// msgStorageUnavailable is the service's message for unavailable storage,
// so that an export says it as every other write does.
const msgStorageUnavailable = "Storage unavailable: cannot write metadata file %s, nothing was committed; retry later"

// objRef is the store's reference to id in warehouse as kind.
func objRef(id ident.Ident, warehouse string, kind store.ObjectKind) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind}
}
