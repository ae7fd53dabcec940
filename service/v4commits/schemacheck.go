package v4commits

import (
	"context"
	"slices"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// fileCheck is the schema check of one file of st's table: the current
// schema, every schema of the table's history for type promotion.
func (st *State) fileCheck(use validation.FileUse, kind, name string, fields []int) validation.FileCheck {
	return validation.FileCheck{Use: use, Kind: kind, Name: name, Schema: st.meta.CurrentSchema(),
		History: st.meta.Schemas(), Fields: fields}
}

// checkFileSchema runs validation.CheckFileSchema for a data or delete
// file: a 400 ValidationException when the file does not fit the table.
func checkFileSchema(c validation.FileCheck, tree []validation.FileNode) error {
	_, err := validation.CheckFileSchema(c, tree)
	return validationErr(err)
}

// checkAddedNotLive refuses (duplicate-file) an added data file or
// equality-delete file that is already live in the table (as a data file,
// a column file or an equality-delete file) and not removed by the same
// commit. One index lookup for all of them narrows the leaves read to
// those that may hold one.
func (cm *Committer) checkAddedNotLive(ctx context.Context, t *Tx, read v4tree.LeafReader, added, dels []v4manifest.TrackedFile, remove []string) error {
	want := map[string][]validation.ColumnFile{}
	for _, r := range slices.Concat(added, dels) {
		if !slices.Contains(remove, r.Location) {
			want[r.Location] = nil
		}
	}
	if len(want) == 0 {
		return nil
	}
	live, err := cm.findLive(ctx, t, read, want)
	if err != nil {
		return err
	}
	for _, r := range slices.Concat(added, dels) {
		kind := "Data file"
		if r.ContentType != v4manifest.ContentData {
			kind = "Delete file"
		}
		if _, ok := want[r.Location]; !ok {
			continue
		}
		if err := live.refuse(t.st.location, kind, r.Location); err != nil {
			return validationErr(err)
		}
	}
	return nil
}

// checkDeleteSchema reads an equality-delete file's footer and checks it
// against the table: its equality fields present, every field it holds
// of the table's type. 400 when the footer cannot be read or the file
// does not fit.
func (cm *Committer) checkDeleteSchema(ctx context.Context, w *store.Warehouse, st *State, row *v4manifest.TrackedFile, eqIDs []int) error {
	name := locations.TableFileName(st.location, row.Location)
	io, err := cm.d.Tables.FileIO(ctx, w, row.Location)
	if err != nil {
		return err
	}
	fi, err := readFooter(ctx, io, row.Location, st.meta.CurrentSchema())
	if err != nil {
		return Reject(validation.ReasonDataFileUnreadable, "Delete file %s: cannot read its Parquet footer", name)
	}
	return checkFileSchema(st.fileCheck(validation.UseEqualityDelete, "Delete file", name, eqIDs), fi.Tree)
}
