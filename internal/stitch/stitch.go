// Package stitch reads a planned data file of a v4 table together with its
// column files and returns the requested columns as one Arrow record: each
// column comes from the newest file that carries its field id (a column
// file) or else from the base file. Column files are dense and row-aligned,
// so columns are stitched by position. A Parquet column without a field id
// takes the one the table's name mapping (Task.NameMapping) gives its name
// path, as the Iceberg spec says; columns with neither are ignored.
//
// It is the core of the public Go reader clients/go/stitch, which
// re-exports it unchanged; the catalog's own packages (the server's
// tests, v4 compaction and export, `catalog read`) import it here, so no
// server-side package depends on a client package.
package stitch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/lakehold/catalog/internal/parquetstats"
)

// Reserved field ids of the row-lineage metadata columns (Iceberg v3+).
const (
	// RowIDFieldID is _row_id: a row's stable id, first_row_id + position
	// unless the base file materializes it.
	RowIDFieldID = 2147483540
	// LastUpdatedFieldID is _last_updated_sequence_number: the data
	// sequence number of the last commit that changed the row.
	LastUpdatedFieldID = 2147483539
)

// ColumnFile is a column file of a task: the field ids it supplies.
type ColumnFile struct {
	Location string
	FieldIDs []int
	// SequenceNumber is the data sequence number of the commit that added
	// the file; 0 when unknown (only incremental plans know it).
	SequenceNumber int64
}

// DeletionVector locates a deletion-vector-v1 blob in a Puffin file.
type DeletionVector struct {
	Location    string
	Offset      int64
	SizeInBytes int64
	Cardinality int64
}

// Task is one data file from a scan plan.
type Task struct {
	DataFile       string
	RecordCount    int64
	ColumnFiles    []ColumnFile
	DeletionVector *DeletionVector
	// FirstRowID is the _row_id of the base file's row 0 (nil when row ids
	// are not assigned).
	FirstRowID *int64
	// SequenceNumber is the base entry's data sequence number; a column
	// update raises it to the update's.
	SequenceNumber int64
	// ColumnUpdated says the base entry has column files even if the task
	// lists none (a plan cuts them to the selected columns, an incremental
	// plan to those added in its range).
	ColumnUpdated bool
	// ChangedOnly marks a task of an incremental plan's change part
	// (column-files-changed-since): ColumnFiles are only those added in
	// the plan's range, so only their fields and the row-lineage columns
	// can be read from it.
	ChangedOnly bool
	// NameMapping is the table's schema.name-mapping.default, parsed
	// (parquetstats.ParseNameMapping); nil when the table has none. It
	// resolves the columns of the task's files that carry no field id.
	NameMapping iceberg.NameMapping
}

// File is an open file for ranged reads.
type File interface {
	io.ReaderAt
	io.Seeker
	io.Closer
}

// Opener opens a file by location.
type Opener func(ctx context.Context, location string) (File, error)

// ErrMisaligned is returned when a file's row count differs from the
// task's: column files must be dense and row-aligned with the base.
var ErrMisaligned = errors.New("stitch: column file is not row-aligned with its base file")

// ErrNotChanged is returned when a ChangedOnly task is asked for a field
// none of its column files carries: its current value may sit in a column
// file the task does not list.
var ErrNotChanged = errors.New("stitch: field did not change in the task's range")

// sources says which file supplies each requested column; optional
// columns may be missing from their file (materialized row lineage).
type sources struct {
	of       map[int]string
	optional map[int]bool
}

// plan picks the file of every requested field: the newest column file
// that carries it, else the base file. Row lineage follows
// docs/column-files.md: _row_id comes only from the base file;
// _last_updated_sequence_number from the column file that carries it,
// unless that file is older than the entry's last column update, and from
// the base file only while the entry has no column files (after an update
// the base file's values predate it).
func plan(task Task, fieldIDs []int) sources {
	src := sources{of: map[int]string{}, optional: map[int]bool{}}
	updated := task.ColumnUpdated || len(task.ColumnFiles) > 0
	want := map[int]bool{}
	for _, id := range fieldIDs {
		want[id] = true
		switch {
		case id == RowIDFieldID || (id == LastUpdatedFieldID && !updated):
			src.of[id], src.optional[id] = task.DataFile, true
		case id == LastUpdatedFieldID:
			// Inherited unless a column file carries it.
		default:
			src.of[id] = task.DataFile
		}
	}
	for _, cf := range task.ColumnFiles {
		for _, id := range cf.FieldIDs {
			switch {
			case !want[id] || id == RowIDFieldID:
			case id == LastUpdatedFieldID && cf.SequenceNumber != 0 && cf.SequenceNumber < task.SequenceNumber:
				// Written before the entry's last update: stale.
			default:
				src.of[id], src.optional[id] = cf.Location, false
			}
		}
	}
	return src
}

// Read returns the columns fieldIDs of the task's live rows, typed by the
// table schema sc (field ids in the Arrow field metadata). fieldIDs may
// include RowIDFieldID and LastUpdatedFieldID (int64 columns). It fails
// when a file cannot be opened or read, is not row-aligned (ErrMisaligned),
// lacks a listed column or holds it with another type, when a field is not
// in sc, and with ErrNotChanged for a field a ChangedOnly task cannot give.
func Read(ctx context.Context, open Opener, sc *iceberg.Schema, task Task, fieldIDs []int) (arrow.RecordBatch, error) {
	src := plan(task, fieldIDs)
	byFile := map[string][]int{}
	for _, id := range fieldIDs {
		if task.ChangedOnly && id != RowIDFieldID && id != LastUpdatedFieldID && src.of[id] == task.DataFile {
			return nil, fmt.Errorf("%w: field %d", ErrNotChanged, id)
		}
		if loc, ok := src.of[id]; ok {
			byFile[loc] = append(byFile[loc], id)
		}
	}
	cols := map[int]arrow.Array{}
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for loc, ids := range byFile {
		got, err := readColumns(ctx, open, sc, loc, ids, src.optional, task.RecordCount, task.NameMapping)
		if err != nil {
			return nil, err
		}
		for id, a := range got {
			cols[id] = a
		}
	}
	fields := make([]arrow.Field, 0, len(fieldIDs))
	arrays := make([]arrow.Array, 0, len(fieldIDs))
	for _, id := range fieldIDs {
		f, a, err := column(sc, task, id, cols, src.of[id])
		if err != nil {
			return nil, err
		}
		if id == RowIDFieldID || id == LastUpdatedFieldID {
			// Computed here: released once the record holds it.
			defer a.Release()
		}
		fields = append(fields, f)
		arrays = append(arrays, a)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, task.RecordCount)
	if task.DeletionVector == nil {
		return rec, nil
	}
	defer rec.Release()
	return applyDV(ctx, open, rec, *task.DeletionVector)
}

// column is the Arrow field and array of one requested field: a read
// column checked against the schema, or a row-lineage column computed
// with its materialized values (when read) taking precedence.
func column(sc *iceberg.Schema, task Task, id int, cols map[int]arrow.Array, loc string) (arrow.Field, arrow.Array, error) {
	md := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
	switch id {
	case RowIDFieldID:
		a, err := lineage(cols[id], loc, func(pos int64) (int64, bool) {
			if task.FirstRowID == nil {
				return 0, false
			}
			return *task.FirstRowID + pos, true
		}, task.RecordCount)
		return arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md}, a, err
	case LastUpdatedFieldID:
		a, err := lineage(cols[id], loc, func(int64) (int64, bool) { return task.SequenceNumber, true }, task.RecordCount)
		return arrow.Field{Name: "_last_updated_sequence_number", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md}, a, err
	}
	f, ok := sc.FindFieldByID(id)
	if !ok {
		return arrow.Field{}, nil, fmt.Errorf("stitch: field %d is not in the schema", id)
	}
	at, err := table.TypeToArrowType(f.Type, true, false)
	if err != nil {
		return arrow.Field{}, nil, err
	}
	a := cols[id]
	if !arrow.TypeEqual(a.DataType(), at) {
		return arrow.Field{}, nil, fmt.Errorf("stitch: field %d is %s in %s, want %s", id, a.DataType(), loc, at)
	}
	return arrow.Field{Name: f.Name, Type: at, Nullable: true, Metadata: md}, a, nil
}

// lineage builds a row-lineage column: the materialized value where
// present and not null, else the inherited one (null when there is none).
func lineage(mat arrow.Array, loc string, inherit func(pos int64) (int64, bool), rows int64) (arrow.Array, error) {
	var vals *array.Int64
	if mat != nil {
		var ok bool
		if vals, ok = mat.(*array.Int64); !ok {
			return nil, fmt.Errorf("stitch: row-lineage column in %s is %s, want int64", loc, mat.DataType())
		}
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(int(rows))
	for pos := int64(0); pos < rows; pos++ {
		if vals != nil && vals.IsValid(int(pos)) {
			b.Append(vals.Value(int(pos)))
		} else if v, ok := inherit(pos); ok {
			b.Append(v)
		} else {
			b.AppendNull()
		}
	}
	return b.NewInt64Array(), nil
}

// applyDV drops the rows whose positions the deletion vector holds.
func applyDV(ctx context.Context, open Opener, rec arrow.RecordBatch, dvr DeletionVector) (arrow.RecordBatch, error) {
	f, err := open(ctx, dvr.Location)
	if err != nil {
		return nil, fmt.Errorf("stitch: open deletion vector %s: %w", dvr.Location, err)
	}
	defer f.Close()
	blob := make([]byte, dvr.SizeInBytes)
	if _, err := f.ReadAt(blob, dvr.Offset); err != nil {
		return nil, fmt.Errorf("stitch: read deletion vector %s: %w", dvr.Location, err)
	}
	bm, err := dv.DeserializeDV(blob, dvr.Cardinality)
	if err != nil {
		return nil, fmt.Errorf("stitch: deletion vector %s: %w", dvr.Location, err)
	}
	mb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mb.Release()
	for i := int64(0); i < rec.NumRows(); i++ {
		mb.Append(!bm.Contains(uint64(i)))
	}
	mask := mb.NewBooleanArray()
	defer mask.Release()
	out, err := compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("stitch: apply deletion vector: %w", err)
	}
	return out, nil
}

// readColumns reads the top-level fields ids of one file, its columns
// resolved to field ids through nm where they carry none; an optional one
// may be missing from it.
func readColumns(ctx context.Context, open Opener, sc *iceberg.Schema, loc string, ids []int, optional map[int]bool, rows int64, nm iceberg.NameMapping) (map[int]arrow.Array, error) {
	pf, err := OpenParquet(ctx, open, loc, rows)
	if err != nil {
		return nil, fmt.Errorf("stitch: %w", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	want := map[int]bool{}
	for _, id := range ids {
		want[id] = true
	}
	sch := pf.MetaData().Schema
	resolved := parquetstats.FieldIDs(sch.Root(), nm)
	// Top-level names are unique in a Parquet schema: the read record's
	// fields are keyed back to their field ids by name.
	byName := map[string]int{}
	roots := map[int]pqschema.Node{}
	var leaves []int
	for c := 0; c < sch.NumColumns(); c++ {
		root := sch.ColumnRoot(c)
		id, ok := resolved[root]
		if ok && want[id] {
			if prev, dup := roots[id]; dup && prev != root {
				return nil, fmt.Errorf("stitch: %s has two columns for field id %d (%s, %s)", loc, id, prev.Name(), root.Name())
			}
			leaves = append(leaves, c)
			byName[root.Name()] = id
			roots[id] = root
		}
	}
	chunks := map[int][]arrow.Array{}
	if len(leaves) > 0 {
		// (nil leaves would read every column)
		if err := readLeaves(ctx, fr, leaves, byName, chunks); err != nil {
			return nil, err
		}
	}
	out := map[int]arrow.Array{}
	for _, id := range ids {
		parts, ok := chunks[id]
		if !ok && optional[id] {
			continue
		}
		if !ok {
			if un := unresolved(sch.Root(), resolved); un != "" {
				return nil, fmt.Errorf("stitch: %s has no column with field id %d (column %q has no field id and the table's name mapping gives it none)", loc, id, un)
			}
			return nil, fmt.Errorf("stitch: %s has no column with field id %d", loc, id)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
		if a, err = relabelField(sc, id, a, roots[id], resolved, loc); err != nil {
			return nil, err
		}
		out[id] = a
	}
	return out, nil
}

// unresolved is the name of a top-level column without a field id
// (written or name-mapped), "" when every column has one.
func unresolved(root *pqschema.GroupNode, ids map[pqschema.Node]int) string {
	for i := 0; i < root.NumFields(); i++ {
		if _, ok := ids[root.Field(i)]; !ok {
			return root.Field(i).Name()
		}
	}
	return ""
}

// relabelField gives a nested column the schema's Arrow type when the
// file names its nested fields otherwise (a name mapping's alias, a list
// element called "item") but holds the same fields by id in the same
// order. Anything else is left for column's type check to refuse.
func relabelField(sc *iceberg.Schema, id int, a arrow.Array, n pqschema.Node, ids map[pqschema.Node]int, loc string) (arrow.Array, error) {
	f, ok := sc.FindFieldByID(id)
	if !ok || n == nil {
		return a, nil
	}
	switch f.Type.(type) {
	case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
	default:
		return a, nil
	}
	at, err := table.TypeToArrowType(f.Type, true, false)
	if err != nil || arrow.TypeEqual(a.DataType(), at) {
		return a, nil
	}
	if !parquetstats.SameFields(n, ids, f.Type) {
		defer a.Release()
		return nil, fmt.Errorf("stitch: %s: column %q (field %d) does not hold the schema's nested fields by id in the schema's order; this reader cannot read it", loc, n.Name(), id)
	}
	d, ok := relabel(a.Data(), at)
	if !ok {
		return a, nil
	}
	defer a.Release()
	defer d.Release()
	return array.MakeFromData(d), nil
}

// relabel rebuilds array data d with type want when the two differ only in
// field names, nullability flags and metadata; false when their layouts
// differ.
func relabel(d arrow.ArrayData, want arrow.DataType) (arrow.ArrayData, bool) {
	got := d.DataType()
	var children []arrow.ArrayData
	switch w := want.(type) {
	case *arrow.StructType:
		g, ok := got.(*arrow.StructType)
		if !ok || g.NumFields() != w.NumFields() {
			return nil, false
		}
		for i := range w.Fields() {
			c, ok := relabel(d.Children()[i], w.Field(i).Type)
			if !ok {
				releaseAll(children)
				return nil, false
			}
			children = append(children, c)
		}
	case *arrow.MapType, *arrow.ListType:
		if got.ID() != want.ID() {
			return nil, false
		}
		c, ok := relabel(d.Children()[0], w.(arrow.ListLikeType).Elem())
		if !ok {
			return nil, false
		}
		children = []arrow.ArrayData{c}
	default:
		if !arrow.TypeEqual(got, want) {
			return nil, false
		}
		d.Retain()
		return d, true
	}
	defer releaseAll(children)
	return array.NewData(want, d.Len(), d.Buffers(), children, d.NullN(), d.Offset()), true
}

func releaseAll(ds []arrow.ArrayData) {
	for _, d := range ds {
		d.Release()
	}
}

// readLeaves reads the leaf columns of a file into chunks by field id
// (byName: the id of each top-level column read).
func readLeaves(ctx context.Context, fr *pqarrow.FileReader, leaves []int, byName map[string]int, chunks map[int][]arrow.Array) error {
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		for i, fld := range rec.Schema().Fields() {
			id, ok := byName[fld.Name]
			if !ok {
				continue
			}
			a := rec.Column(i)
			a.Retain()
			chunks[id] = append(chunks[id], a)
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

var _ parquet.ReaderAtSeeker = File(nil)
