// Package scanplan decides, from metadata alone, which files of a table a
// scan must read: it binds a REST filter (Iceberg expression JSON) to a
// schema, evaluates it inclusively against column stats and partition
// values, and resolves a select list to the top-level fields it needs. It is
// pure: values in, values out, no I/O.
//
// Every evaluation is inclusive: false means "no row of this file can
// match", true means "some row might". Anything the evaluator does not know
// (missing stats, an unsupported type, a transform term) answers true, so
// pruning never drops a file a scan needs.
package scanplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// ErrFilter marks a filter that cannot be used: malformed JSON, an unknown
// column, or a literal that does not fit its column. Its message is meant
// for the client.
var ErrFilter = errors.New("invalid scan filter")

// ErrSelect marks a select list naming a column the schema does not have.
var ErrSelect = errors.New("invalid scan select")

// Filter is a row filter bound to a schema, with NOT nodes pushed down to
// the predicates (projections assume there are none).
type Filter struct {
	expr iceberg.BooleanExpression
	ids  []int
}

// Bind parses and binds a REST filter to sc. A nil or empty filter, or the
// JSON literal true, is always-true. It fails with ErrFilter when the JSON
// is not an expression, names a column sc lacks (respecting caseSensitive)
// or carries a literal that cannot be converted to its column's type.
func Bind(raw json.RawMessage, sc *iceberg.Schema, caseSensitive bool) (*Filter, error) {
	if len(strings.TrimSpace(string(raw))) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return &Filter{expr: iceberg.AlwaysTrue{}}, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: the filter is not valid JSON", ErrFilter)
	}
	// ParseExpr types literals by looking columns up case-sensitively; a
	// case-insensitive filter is parsed untyped and typed by BindExpr.
	typing := sc
	if !caseSensitive {
		typing = nil
	}
	parsed, err := parse(raw, typing)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrFilter, clean(err))
	}
	bound, err := iceberg.BindExpr(sc, parsed, caseSensitive)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrFilter, clean(err))
	}
	if bound, err = iceberg.RewriteNotExpr(bound); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrFilter, clean(err))
	}
	ids, err := iceberg.ExtractFieldIDs(bound)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrFilter, clean(err))
	}
	return &Filter{expr: bound, ids: ids}, nil
}

// parse wraps iceberg.ParseExpr, turning its panics on hostile input into
// errors: a filter comes from the client.
func parse(raw json.RawMessage, sc *iceberg.Schema) (e iceberg.BooleanExpression, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, errors.New("the filter is not a valid Iceberg expression")
		}
	}()
	return iceberg.ParseExpr(raw, sc)
}

// clean shortens a library error to its first line; the messages carry the
// offending column or literal, never anything of the server's.
func clean(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// Expr is the bound, NOT-free expression.
func (f *Filter) Expr() iceberg.BooleanExpression { return f.expr }

// FieldIDs are the ids of the fields the filter references.
func (f *Filter) FieldIDs() []int { return f.ids }

// AlwaysTrue reports whether the filter keeps every row.
func (f *Filter) AlwaysTrue() bool {
	_, ok := f.expr.(iceberg.AlwaysTrue)
	return ok
}

// TopLevelIDs resolves a select list (dotted full names) to the ids of the
// top-level fields that hold the named columns, with the top-level fields
// of extra (e.g. the filter's field ids) added. An empty select returns nil,
// meaning every field. It fails with ErrSelect for an unknown name.
func TopLevelIDs(sc *iceberg.Schema, names []string, caseSensitive bool, extra []int) (map[int]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	top := topOf(sc)
	out := map[int]bool{}
	for _, n := range names {
		var f iceberg.NestedField
		var ok bool
		if caseSensitive {
			f, ok = sc.FindFieldByName(n)
		} else {
			f, ok = sc.FindFieldByNameCaseInsensitive(n)
		}
		if !ok {
			return nil, fmt.Errorf("%w: no column named %q", ErrSelect, n)
		}
		out[top[f.ID]] = true
	}
	for _, id := range extra {
		if t, ok := top[id]; ok {
			out[t] = true
		}
	}
	return out, nil
}

// TopLevel maps every field id of sc (nested ones included) to the id of
// the top-level field that holds it.
func TopLevel(sc *iceberg.Schema) map[int]int { return topOf(sc) }

func topOf(sc *iceberg.Schema) map[int]int {
	out := map[int]int{}
	for _, f := range sc.Fields() {
		walk(f, func(id int) { out[id] = f.ID })
	}
	return out
}

// walk calls fn with f's id and that of every field nested in f.
func walk(f iceberg.NestedField, fn func(int)) {
	fn(f.ID)
	switch t := f.Type.(type) {
	case *iceberg.StructType:
		for _, c := range t.FieldList {
			walk(c, fn)
		}
	case *iceberg.ListType:
		walk(t.ElementField(), fn)
	case *iceberg.MapType:
		walk(t.KeyField(), fn)
		walk(t.ValueField(), fn)
	}
}
