// Package foldcheck decides whether a fold (a base data file stitched with
// its column files and rewritten as one file) kept every value: before
// writing, RequiredNulls refuses a stitched input whose required fields
// hold nulls (a Parquet writer would store the null slots' zeros); after
// writing, Compare checks the file as read back against the rows that were
// written: row count, null count per column and, for a deterministic sample
// of rows, every value, bit for bit. It takes Arrow records and returns
// typed errors; it reads and writes nothing.
package foldcheck

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// Reason codes of the two refusals, as a client sees them.
const (
	// ReasonRequiredFieldNulls: the stitched input holds a null in a
	// required field, so no faithful file can be written.
	ReasonRequiredFieldNulls = "required-field-nulls"
	// ReasonFoldMismatch: the written file does not hold what was written
	// to it; the fold is the server's failure and is not committed.
	ReasonFoldMismatch = "fold-mismatch"
)

// RequiredNullsError reports a required field holding nulls.
type RequiredNullsError struct {
	// FieldID and Path name the field: Path is dotted from the top-level
	// field ("point.x", "tags.element", "attrs.value").
	FieldID int
	Path    string
	// Nulls counts the null slots reachable in the field (under valid
	// parents); Row is the first top-level row holding one.
	Nulls int64
	Row   int
}

func (e *RequiredNullsError) Error() string {
	return fmt.Sprintf("required field %s (id %d) holds %d null(s), the first in row %d", e.Path, e.FieldID, e.Nulls, e.Row)
}

// MismatchError reports a difference between the written rows and the
// file read back. It names no value: values are table data.
type MismatchError struct {
	// FieldID and Field name the top-level column (0 and "" for the row
	// count); Check is what differed ("row count", "null count",
	// "element count", "value", "column").
	FieldID int
	Field   string
	Check   string
	// Row is the compared row for Check "value", else -1.
	Row int
	// Detail says how the values differ (at which nested path, null vs
	// value, lengths), without the values.
	Detail string
}

func (e *MismatchError) Error() string {
	s := "the written file differs from its input: " + e.Check
	if e.Field != "" {
		s += " of field " + e.Field + " (id " + strconv.Itoa(e.FieldID) + ")"
	}
	if e.Row >= 0 {
		s += " at row " + strconv.Itoa(e.Row)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// fieldID is the Parquet field id in an Arrow field's metadata, -1 when
// it has none.
func fieldID(f arrow.Field) int {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return -1
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return id
}
