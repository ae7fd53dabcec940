// Package stitch reads a planned data file of a v4 table together with its
// column files and returns the requested columns as one Arrow record: each
// column comes from the newest file that carries its field id (a column
// file) or else from the base file. Column files are dense and row-aligned,
// so columns are stitched by position.
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
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// ColumnFile is a column file of a task: the field ids it supplies.
type ColumnFile struct {
	Location string
	FieldIDs []int
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

// Read returns the columns fieldIDs of the task's rows, typed by the table
// schema sc (field ids in the Arrow field metadata).
func Read(ctx context.Context, open Opener, sc *iceberg.Schema, task Task, fieldIDs []int) (arrow.RecordBatch, error) {
	source := map[int]string{}
	for _, id := range fieldIDs {
		source[id] = task.DataFile
	}
	for _, cf := range task.ColumnFiles {
		for _, id := range cf.FieldIDs {
			if _, want := source[id]; want {
				source[id] = cf.Location
			}
		}
	}
	byFile := map[string][]int{}
	for _, id := range fieldIDs {
		byFile[source[id]] = append(byFile[source[id]], id)
	}
	cols := map[int]arrow.Array{}
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for loc, ids := range byFile {
		got, err := readColumns(ctx, open, loc, ids, task.RecordCount)
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
		f, ok := sc.FindFieldByID(id)
		if !ok {
			return nil, fmt.Errorf("stitch: field %d is not in the schema", id)
		}
		at, err := table.TypeToArrowType(f.Type, true, false)
		if err != nil {
			return nil, err
		}
		a := cols[id]
		if !arrow.TypeEqual(a.DataType(), at) {
			return nil, fmt.Errorf("stitch: field %d is %s in %s, want %s", id, a.DataType(), source[id], at)
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: at, Nullable: true,
			Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})})
		arrays = append(arrays, a)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, task.RecordCount)
	if task.DeletionVector == nil {
		return rec, nil
	}
	defer rec.Release()
	return applyDV(ctx, open, rec, *task.DeletionVector)
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

// readColumns reads the top-level fields ids of one file.
func readColumns(ctx context.Context, open Opener, loc string, ids []int, rows int64) (map[int]arrow.Array, error) {
	f, err := open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("stitch: open %s: %w", loc, err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("stitch: %s: %w", loc, err)
	}
	defer pf.Close()
	if pf.NumRows() != rows {
		return nil, fmt.Errorf("%w: %s has %d rows, base has %d", ErrMisaligned, loc, pf.NumRows(), rows)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	want := map[int]bool{}
	for _, id := range ids {
		want[id] = true
	}
	sch := pf.MetaData().Schema
	var leaves []int
	for c := 0; c < sch.NumColumns(); c++ {
		if want[int(sch.ColumnRoot(c).FieldID())] {
			leaves = append(leaves, c)
		}
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	chunks := map[int][]arrow.Array{}
	for rr.Next() {
		rec := rr.RecordBatch()
		for i, fld := range rec.Schema().Fields() {
			v, _ := fld.Metadata.GetValue("PARQUET:field_id")
			id, _ := strconv.Atoi(v)
			a := rec.Column(i)
			a.Retain()
			chunks[id] = append(chunks[id], a)
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	out := map[int]arrow.Array{}
	for _, id := range ids {
		parts, ok := chunks[id]
		if !ok {
			return nil, fmt.Errorf("stitch: %s has no column with field id %d", loc, id)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
		out[id] = a
	}
	return out, nil
}

var _ parquet.ReaderAtSeeker = File(nil)
