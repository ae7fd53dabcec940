package foldcheck

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// diff compares slot i of w with slot j of g, deeply, and says how they
// differ ("" when they do not). Fixed-width values are compared by their
// bytes (floats by bits), variable-width ones by their bytes, nulls only
// with nulls.
func diff(w, g arrow.Array, i, j int) string {
	w, g = storage(w), storage(g)
	if wn, gn := w.IsNull(i), g.IsNull(j); wn || gn {
		switch {
		case wn && gn:
			return ""
		case wn:
			return "a null written, a value read back"
		default:
			return "a value written, a null read back"
		}
	}
	if w.DataType().ID() != g.DataType().ID() {
		return fmt.Sprintf("written as %s, read back as %s", w.DataType(), g.DataType())
	}
	switch wa := w.(type) {
	case *array.Struct:
		return diffStruct(wa, g.(*array.Struct), i, j)
	case array.ListLike:
		return diffList(wa, g.(array.ListLike), i, j)
	case *array.Boolean:
		if wa.Value(i) != g.(*array.Boolean).Value(j) {
			return "the boolean differs"
		}
		return ""
	case interface{ Value(int) string }:
		if wa.Value(i) != g.(interface{ Value(int) string }).Value(j) {
			return "the string differs"
		}
		return ""
	case interface{ Value(int) []byte }:
		if !bytes.Equal(wa.Value(i), g.(interface{ Value(int) []byte }).Value(j)) {
			return "the binary differs"
		}
		return ""
	}
	return diffFixed(w, g, i, j)
}

// diffFixed compares fixed-width values by their bytes.
func diffFixed(w, g arrow.Array, i, j int) string {
	fw, ok := w.DataType().(arrow.FixedWidthDataType)
	gw, gok := g.DataType().(arrow.FixedWidthDataType)
	if !ok || !gok || fw.BitWidth()%8 != 0 {
		return fmt.Sprintf("type %s cannot be compared", w.DataType())
	}
	if fw.Bytes() != gw.Bytes() {
		return fmt.Sprintf("%d-byte values written, %d-byte read back", fw.Bytes(), gw.Bytes())
	}
	if !bytes.Equal(fixedBytes(w, i, fw.Bytes()), fixedBytes(g, j, fw.Bytes())) {
		return "the value's bits differ"
	}
	return ""
}

// fixedBytes is the value at slot i of a fixed-width array.
func fixedBytes(a arrow.Array, i, width int) []byte {
	d := a.Data()
	buf := d.Buffers()[1].Bytes()
	at := (d.Offset() + i) * width
	return buf[at : at+width]
}

func diffStruct(w, g *array.Struct, i, j int) string {
	if w.NumField() != g.NumField() {
		return fmt.Sprintf("%d struct fields written, %d read back", w.NumField(), g.NumField())
	}
	st := w.DataType().(*arrow.StructType)
	for f := 0; f < w.NumField(); f++ {
		if d := diff(w.Field(f), g.Field(f), i, j); d != "" {
			return st.Field(f).Name + ": " + d
		}
	}
	return ""
}

func diffList(w, g array.ListLike, i, j int) string {
	ws, we := w.ValueOffsets(i)
	gs, ge := g.ValueOffsets(j)
	if we-ws != ge-gs {
		return fmt.Sprintf("%d elements written, %d read back", we-ws, ge-gs)
	}
	for k := int64(0); k < we-ws; k++ {
		if d := diff(w.ListValues(), g.ListValues(), int(ws+k), int(gs+k)); d != "" {
			return fmt.Sprintf("element %d: %s", k, d)
		}
	}
	return ""
}
