package v4commits

import (
	"context"
	"errors"
	"maps"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// errNoBlob: the Puffin file has no blob at the deletion vector's offset.
var errNoBlob = errors.New("no blob at the offset")

// uniqueColumnFiles refuses (duplicate-file) a column file named twice.
func uniqueColumnFiles(st *State, files []validation.ColumnFile) error {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = locations.TableFileName(st.location, f.Location)
	}
	return validation.CheckUniqueFiles("Column file", names)
}

// findColumnTargets finds the base files of byBase and, in the same
// index lookup, whether a column file is already live anywhere in the
// table: it returns the bases' hits and refuses (duplicate-file) a column
// file that is a live data file, a live column file of any base (whatever
// leaf holds it) or a live equality-delete file.
func (cm *Committer) findColumnTargets(ctx context.Context, t *Tx, read v4tree.LeafReader, files []validation.ColumnFile, byBase map[string][]validation.ColumnFile) (map[string]*v4tree.BaseHit, []validation.DeleteFile, error) {
	want := maps.Clone(byBase)
	for _, f := range files {
		if _, ok := want[f.Location]; !ok {
			want[f.Location] = nil
		}
	}
	live, err := cm.findLive(ctx, t, read, want)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		if err := live.refuse(t.st.location, "Column file", f.Location); err != nil {
			return nil, nil, err
		}
	}
	found := map[string]*v4tree.BaseHit{}
	for base := range byBase {
		if h, ok := live.data[base]; ok {
			found[base] = h
		}
	}
	return found, live.deletes, nil
}

// refuse refuses (duplicate-file) new file loc (absolute; kind names it
// in the message) when it is already a live data, column or
// equality-delete file of the table at tableLoc; nil otherwise.
func (l liveFiles) refuse(tableLoc, kind, loc string) error {
	name := locations.TableFileName(tableLoc, loc)
	if h := l.data[loc]; h != nil && h.Row.Tracking.Status.Live() {
		return validation.LiveDuplicate(kind, name, "data file")
	}
	if owner, ok := l.columnOwner[loc]; ok {
		return validation.LiveDuplicate(kind, name, "column file of "+locations.TableFileName(tableLoc, owner))
	}
	for _, d := range l.deletes {
		if v4manifest.Resolve(tableLoc, d.Location) == loc {
			return validation.LiveDuplicate(kind, name, "equality-delete file")
		}
	}
	return nil
}

// baseDetails reads the deletion vector and column files of every found
// base (the index lookup reads only location, tracking and record count),
// one read per leaf holding bases; bases in the root itself are complete.
// It also returns the owner (base location) of every live column file of
// the rows it has at hand: the root's data rows and every row of the
// leaves it read.
func (cm *Committer) baseDetails(ctx context.Context, t *Tx, read v4tree.LeafReader, found map[string]*v4tree.BaseHit) (map[string]v4manifest.TrackedFile, map[string]string, error) {
	out := map[string]v4manifest.TrackedFile{}
	owners := map[string]string{}
	leaves := map[int]bool{}
	for base, h := range found {
		if rr := t.st.rootRows[h.RootIndex]; rr.Location == h.Row.Location {
			out[base] = h.Row
		} else {
			leaves[h.RootIndex] = true
		}
	}
	addOwners(owners, t.st.location, t.st.rootRows)
	for i := range leaves {
		rows, err := read(&t.st.rootRows[i], []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDDeletionVector, v4manifest.IDColumnFiles})
		if err != nil {
			return nil, nil, err
		}
		addOwners(owners, t.st.location, rows)
		for _, r := range rows {
			if h, ok := found[r.Location]; ok && h.RootIndex == i && r.Tracking.Status.Live() {
				out[r.Location] = r
			}
		}
	}
	return out, owners, nil
}

// addOwners records, for every live data row of rows, its base location
// as the owner of each of its column files (by absolute location).
func addOwners(owners map[string]string, tableLoc string, rows []v4manifest.TrackedFile) {
	for _, r := range rows {
		if r.ContentType != v4manifest.ContentData || !r.Tracking.Status.Live() {
			continue
		}
		for _, cf := range r.ColumnFiles {
			owners[v4manifest.Resolve(tableLoc, cf.Location)] = r.Location
		}
	}
}

// checkColumnSchemas checks each column file against the table schema
// (nested types, required fields' nulls) and refuses one that is already
// a live column file (owners, from baseDetails) of its base or of another
// base whose row the commit read (findColumnTargets has refused one live
// anywhere else, through the base-file index).
// A required field's nulls that the base's deletion vector could cover
// are checked position by position.
func (cm *Committer) checkColumnSchemas(ctx context.Context, w *store.Warehouse, st *State, files []validation.ColumnFile, bases map[string]v4manifest.TrackedFile, owners map[string]string, footers map[string]*columnFooter) error {
	for _, f := range files {
		name := locations.TableFileName(st.location, f.Location)
		b := bases[f.DataFile]
		if owner, ok := owners[f.Location]; ok {
			return validation.LiveDuplicate("Column file", name, "column file of "+locations.TableFileName(st.location, owner))
		}
		c := st.fileCheck(validation.UseColumn, "Column file", name, f.FieldIDs)
		if b.DeletionVector != nil {
			c.DeletedRows = b.DeletionVector.Cardinality
		}
		fi := footers[f.Location].fi
		prove, err := validation.CheckFileSchema(c, fi.Tree)
		if err != nil {
			return err
		}
		for _, p := range prove {
			at, why := cm.nullOutsideDeleted(ctx, w, st, f.Location, b.DeletionVector, p.FieldID)
			if err := validation.CheckNullsDeleted(c, p.FieldID, at, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// nullOutsideDeleted reads the deletion vector d and the column of field
// id in column file loc, and returns the first row position where the
// column is null but the row is not deleted (-1: none), or why it could
// not tell (a client-safe reason).
func (cm *Committer) nullOutsideDeleted(ctx context.Context, w *store.Warehouse, st *State, loc string, d *v4manifest.DeletionVector, id int) (int64, string) {
	r, closeFile, blobs, readErr := cm.openPuffin(ctx, w, st, d.Location)
	if closeFile != nil {
		defer closeFile()
	}
	if readErr != "" {
		return -1, "the deletion vector cannot be read"
	}
	var data []byte
	var err error = errNoBlob
	for i, b := range blobs {
		if b.Offset == d.Offset {
			data, err = r.ReadBlobByMetadata(r.Blobs()[i])
		}
	}
	if err != nil {
		return -1, "the deletion vector cannot be read"
	}
	bm, err := dv.DeserializeDV(data, -1)
	if err != nil {
		return -1, "the deletion vector cannot be decoded"
	}
	io, err := cm.d.Tables.FileIO(ctx, w, loc)
	if err != nil {
		return -1, "the column file cannot be opened"
	}
	cf, err := io.Open(ctx, loc)
	if err != nil {
		return -1, "the column file cannot be opened"
	}
	defer cf.Close()
	pf, err := file.NewParquetReader(cf)
	if err != nil {
		return -1, "the column file cannot be read"
	}
	defer pf.Close()
	col := topLevelColumn(pf.MetaData().Schema.Root(), id)
	if col < 0 {
		return -1, "the column of the field is not a top-level column"
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return -1, "the column file cannot be read"
	}
	cr, err := fr.GetColumn(ctx, col)
	if err != nil {
		return -1, "the column cannot be read"
	}
	defer cr.Release()
	var pos int64
	for pos < pf.NumRows() {
		chunked, err := cr.NextBatch(1 << 16)
		if err != nil || chunked.Len() == 0 {
			return -1, "the column cannot be read"
		}
		for _, a := range chunked.Chunks() {
			for j := 0; j < a.Len(); j++ {
				if a.IsNull(j) && !bm.Contains(uint64(pos)) {
					chunked.Release()
					return pos, ""
				}
				pos++
			}
		}
		chunked.Release()
	}
	return -1, ""
}

// topLevelColumn is the index among root's fields (what pqarrow's
// GetColumn takes; not a leaf index, which differs once a nested field
// comes first) of the top-level primitive column of field id; -1 if none.
func topLevelColumn(root *pqschema.GroupNode, id int) int {
	for i := 0; i < root.NumFields(); i++ {
		n := root.Field(i)
		if _, ok := n.(*pqschema.PrimitiveNode); ok && int(n.FieldID()) == id && n.RepetitionType() != parquet.Repetitions.Repeated {
			return i
		}
	}
	return -1
}
