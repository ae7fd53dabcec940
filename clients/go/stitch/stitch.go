// Package stitch reads a planned data file of a v4 table together with its
// column files and returns the requested columns as one Arrow record: each
// column comes from the newest file that carries its field id (a column
// file) or else from the base file. Column files are dense and row-aligned,
// so columns are stitched by position. A Parquet column without a field id
// takes the one the table's name mapping (Task.NameMapping) gives its name
// path, as the Iceberg spec says; columns with neither are ignored.
//
// It is the public Go reader of v4 tables: a service that plans a scan
// through the catalog's REST API (POST .../plan with
// X-Iceberg-Column-Files: true) builds a Task from each planned file and
// calls Read with an Opener over its own storage client. It is a thin
// public face over internal/stitch, which the catalog itself uses; every
// name here is that package's, so the two cannot drift.
package stitch

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"

	core "github.com/lakehold/catalog/internal/stitch"
)

// Reserved field ids of the row-lineage metadata columns (Iceberg v3+).
const (
	// RowIDFieldID is _row_id: a row's stable id, first_row_id + position
	// unless the base file materializes it.
	RowIDFieldID = core.RowIDFieldID
	// LastUpdatedFieldID is _last_updated_sequence_number: the data
	// sequence number of the last commit that changed the row.
	LastUpdatedFieldID = core.LastUpdatedFieldID
)

type (
	// ColumnFile is one column file of a planned data file.
	ColumnFile = core.ColumnFile
	// DeletionVector is the deletion vector of a planned data file.
	DeletionVector = core.DeletionVector
	// Task is one planned data file with its column files.
	Task = core.Task
	// File is an open file for ranged reads.
	File = core.File
	// Opener opens a file by location over the caller's storage.
	Opener = core.Opener
)

var (
	// ErrMisaligned is returned when a file's row count differs from the
	// task's: column files must be dense and row-aligned with the base.
	ErrMisaligned = core.ErrMisaligned
	// ErrNotChanged is returned when a ChangedOnly task is asked for a
	// field none of its column files carries.
	ErrNotChanged = core.ErrNotChanged
)

// Read returns the columns fieldIDs of the task's live rows, typed by the
// table schema sc. fieldIDs may include RowIDFieldID and
// LastUpdatedFieldID. It fails when a file cannot be opened or read, is
// not row-aligned (ErrMisaligned), lacks a listed column or holds it with
// another type, when a field is not in sc, and with ErrNotChanged for a
// field a ChangedOnly task cannot give.
func Read(ctx context.Context, open Opener, sc *iceberg.Schema, task Task, fieldIDs []int) (arrow.RecordBatch, error) {
	return core.Read(ctx, open, sc, task, fieldIDs)
}

// OpenParquet opens the Parquet file at loc through open and reads its
// footer; when rows is not negative the file must have that many rows
// (ErrMisaligned otherwise). Closing the reader closes the file.
func OpenParquet(ctx context.Context, open Opener, loc string, rows int64) (*file.Reader, error) {
	return core.OpenParquet(ctx, open, loc, rows)
}
