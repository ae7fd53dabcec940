package foldcheck

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// SampleSize is the number of rows Sample picks from a large file.
const SampleSize = 128

// Sample picks the rows of an n-row file whose values Compare checks: all
// of them when n ≤ k, else the first, the last and k−2 spread evenly in
// between. The same n and k always give the same rows.
func Sample(n, k int) []int {
	k = max(k, 2)
	if n <= k {
		out := make([]int, max(n, 0))
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, 0, k)
	for i := 0; i < k; i++ {
		// Evenly spaced, 0 and n-1 included; strictly increasing as n > k.
		out = append(out, int(int64(i)*int64(n-1)/int64(k-1)))
	}
	return out
}

// Compare checks got (the written file, read back) against want (the rows
// written to it): the same row count, the same top-level columns by field
// id, per column the same null count and, for lists and maps, the same
// total element count, and at each row of rows equal values, compared
// deeply and exactly (floats by their bits, so NaN and −0.0 count; an
// empty string is not a null). Field names, nullability flags and
// metadata do not matter; layouts do. It returns a *MismatchError for the
// first difference, nil when there is none.
func Compare(want, got arrow.RecordBatch, rows []int) error {
	if want.NumRows() != got.NumRows() {
		return &MismatchError{Check: "row count", Row: -1, Detail: fmt.Sprintf("%d rows written, %d read back", want.NumRows(), got.NumRows())}
	}
	gotCols := map[int]int{}
	for i, f := range got.Schema().Fields() {
		gotCols[fieldID(f)] = i
	}
	if len(gotCols) != int(got.NumCols()) || got.NumCols() != want.NumCols() {
		return &MismatchError{Check: "column", Row: -1, Detail: fmt.Sprintf("%d columns written, %d read back", want.NumCols(), got.NumCols())}
	}
	for i, f := range want.Schema().Fields() {
		id := fieldID(f)
		j, ok := gotCols[id]
		if !ok {
			return &MismatchError{FieldID: id, Field: f.Name, Check: "column", Row: -1, Detail: "missing from the file"}
		}
		if err := compareColumn(want.Column(i), got.Column(j), rows); err != nil {
			err.FieldID, err.Field = id, f.Name
			return err
		}
	}
	return nil
}

// compareColumn compares one column; the caller names the field.
func compareColumn(w, g arrow.Array, rows []int) *MismatchError {
	if w.NullN() != g.NullN() {
		return &MismatchError{Check: "null count", Row: -1, Detail: fmt.Sprintf("%d nulls written, %d read back", w.NullN(), g.NullN())}
	}
	if wl, ok := storage(w).(array.ListLike); ok {
		gl, ok := storage(g).(array.ListLike)
		if !ok {
			return &MismatchError{Check: "value", Row: -1, Detail: "a list or map read back as " + g.DataType().String()}
		}
		if we, ge := elements(wl), elements(gl); we != ge {
			return &MismatchError{Check: "element count", Row: -1, Detail: fmt.Sprintf("%d elements written, %d read back", we, ge)}
		}
	}
	for _, r := range rows {
		if d := diff(w, g, r, r); d != "" {
			return &MismatchError{Check: "value", Row: r, Detail: d}
		}
	}
	return nil
}

// elements counts the elements of all the lists of l.
func elements(l array.ListLike) int64 {
	if l.Len() == 0 {
		return 0
	}
	start, _ := l.ValueOffsets(0)
	_, end := l.ValueOffsets(l.Len() - 1)
	return end - start
}

// storage unwraps an extension array (uuid) to its storage.
func storage(a arrow.Array) arrow.Array {
	if ext, ok := a.(array.ExtensionArray); ok {
		return ext.Storage()
	}
	return a
}
