package foldcheck

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// RequiredNulls returns a *RequiredNullsError for the first column of rec
// (matched to sc by the PARQUET:field_id of its Arrow field) that holds a
// null where sc requires a value: a required top-level field, or a
// required struct field, list element or map value under a valid parent.
// Columns sc does not know (row lineage) are skipped. It returns nil when
// every required slot holds a value.
func RequiredNulls(rec arrow.RecordBatch, sc *iceberg.Schema) error {
	for i, f := range rec.Schema().Fields() {
		tf, ok := sc.FindFieldByID(fieldID(f))
		if !ok {
			continue
		}
		w := walker{}
		w.walk(rec.Column(i), tf.Type, tf.Required, tf.ID, tf.Name, nil)
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// walker carries the first failure down a nested column.
type walker struct {
	err *RequiredNullsError
}

// span maps a reachable slot of a nested array to its top-level row.
type span struct {
	pos, row int
}

// walk checks array a of Iceberg type t. reach lists the slots of a that
// sit under valid parents, with their top-level rows; nil means every
// slot, slot i being row i.
func (w *walker) walk(a arrow.Array, t iceberg.Type, required bool, id int, path string, reach []span) {
	if ext, ok := a.(array.ExtensionArray); ok {
		a = ext.Storage()
	}
	if required {
		w.nulls(a, id, path, reach)
		if w.err != nil {
			return
		}
	}
	switch t := t.(type) {
	case *iceberg.StructType:
		s, ok := a.(*array.Struct)
		if !ok {
			return
		}
		sub := validSlots(a, reach)
		for i, f := range t.FieldList {
			if i >= s.NumField() || w.err != nil {
				return
			}
			w.walk(s.Field(i), f.Type, f.Required, f.ID, path+"."+f.Name, sub)
		}
	case *iceberg.ListType:
		l, ok := a.(array.ListLike)
		if !ok {
			return
		}
		w.walk(l.ListValues(), t.Element, t.ElementRequired, t.ElementID, path+".element", elementSlots(l, reach))
	case *iceberg.MapType:
		m, ok := a.(*array.Map)
		if !ok {
			return
		}
		sub := elementSlots(m, reach)
		w.walk(m.Keys(), t.KeyType, true, t.KeyID, path+".key", sub)
		if w.err == nil {
			w.walk(m.Items(), t.ValueType, t.ValueRequired, t.ValueID, path+".value", sub)
		}
	}
}

// nulls records an error when a holds a null in a reachable slot.
func (w *walker) nulls(a arrow.Array, id int, path string, reach []span) {
	if a.NullN() == 0 {
		return
	}
	e := &RequiredNullsError{FieldID: id, Path: path, Row: -1}
	if reach == nil {
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				e.Nulls++
				if e.Row < 0 {
					e.Row = i
				}
			}
		}
	} else {
		for _, s := range reach {
			if a.IsNull(s.pos) {
				e.Nulls++
				if e.Row < 0 {
					e.Row = s.row
				}
			}
		}
	}
	if e.Nulls > 0 {
		w.err = e
	}
}

// validSlots are the reachable slots of a that are valid: a struct's
// children are reachable there.
func validSlots(a arrow.Array, reach []span) []span {
	if reach == nil && a.NullN() == 0 {
		return nil
	}
	var out []span
	each(a.Len(), reach, func(s span) {
		if a.IsValid(s.pos) {
			out = append(out, s)
		}
	})
	if out == nil {
		out = []span{} // none reachable, not "all"
	}
	return out
}

// elementSlots are the child slots of the valid reachable lists of l.
func elementSlots(l array.ListLike, reach []span) []span {
	out := []span{}
	each(l.Len(), reach, func(s span) {
		if !l.IsValid(s.pos) {
			return
		}
		start, end := l.ValueOffsets(s.pos)
		for p := start; p < end; p++ {
			out = append(out, span{pos: int(p), row: s.row})
		}
	})
	return out
}

// each calls f on every reachable slot (all n when reach is nil).
func each(n int, reach []span, f func(span)) {
	if reach != nil {
		for _, s := range reach {
			f(s)
		}
		return
	}
	for i := 0; i < n; i++ {
		f(span{pos: i, row: i})
	}
}
