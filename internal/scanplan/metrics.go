package scanplan

import (
	"errors"
	"math"
	"reflect"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

// Stats are what a manifest row says about a file (or, on a root row, about
// all files of a leaf): its row count and per-field stats.
type Stats struct {
	// RecordCount is the row count; 0 rows match nothing. Negative means
	// unknown.
	RecordCount int64
	// Fields are stats by field id.
	Fields map[int]*v4manifest.FieldStats
	// Usable, when set, says whether a field's stats may be trusted; stats
	// of a field it refuses are treated as unknown. The planner uses it for
	// the stats precedence rule (see package service).
	Usable func(id int) bool
}

// MightMatch reports whether some row described by st might satisfy f
// (inclusive: unknown stats never prune).
func (f *Filter) MightMatch(st Stats) bool {
	if st.RecordCount == 0 {
		return false
	}
	if f.AlwaysTrue() {
		return true
	}
	ok, err := iceberg.VisitExpr(f.expr, &metricsEval{st: st})
	return err != nil || ok
}

// metricsEval is the inclusive evaluator over Stats.
type metricsEval struct{ st Stats }

func (*metricsEval) VisitTrue() bool                            { return true }
func (*metricsEval) VisitFalse() bool                           { return false }
func (*metricsEval) VisitNot(child bool) bool                   { return true } // NOTs were rewritten away
func (*metricsEval) VisitAnd(l, r bool) bool                    { return l && r }
func (*metricsEval) VisitOr(l, r bool) bool                     { return l || r }
func (*metricsEval) VisitUnbound(iceberg.UnboundPredicate) bool { return true }

// VisitBound decides one predicate. Only plain column references are
// evaluated; a transform term or a field without trusted stats answers true.
func (m *metricsEval) VisitBound(p iceberg.BoundPredicate) bool {
	ref, ok := p.Term().(iceberg.BoundReference)
	if !ok {
		return true
	}
	id := ref.Field().ID
	if m.st.Usable != nil && !m.st.Usable(id) {
		return true
	}
	fs := m.st.Fields[id]
	if fs == nil {
		return true
	}
	return mightMatch(p, fs)
}

// mightMatch evaluates one predicate against one field's stats.
func mightMatch(p iceberg.BoundPredicate, fs *v4manifest.FieldStats) bool {
	allNull := fs.ValueCount != nil && fs.NullValueCount != nil && *fs.ValueCount == *fs.NullValueCount
	allNaN := fs.ValueCount != nil && fs.NaNValueCount != nil && *fs.ValueCount == *fs.NaNValueCount
	switch p.Op() {
	case iceberg.OpIsNull:
		return fs.NullValueCount == nil || *fs.NullValueCount > 0
	case iceberg.OpNotNull:
		return !allNull
	case iceberg.OpIsNan:
		return !allNull && (fs.NaNValueCount == nil || *fs.NaNValueCount > 0)
	case iceberg.OpNotNan:
		return !allNaN
	case iceberg.OpNEQ, iceberg.OpNotIn, iceberg.OpNotStartsWith:
		return true
	}
	if allNull || allNaN {
		return false // only nulls (or NaNs) can never satisfy a comparison
	}
	switch p.Op() {
	case iceberg.OpIn:
		sp, ok := p.(iceberg.BoundSetPredicate)
		if !ok {
			return true
		}
		for _, lit := range sp.Literals().Members() {
			if inRange(fs, lit.Any()) {
				return true
			}
		}
		return false
	case iceberg.OpStartsWith:
		return startsWithMightMatch(p, fs)
	}
	lp, ok := p.(iceberg.BoundLiteralPredicate)
	if !ok {
		return true
	}
	v := lp.Literal().Any()
	switch p.Op() {
	case iceberg.OpLT:
		return cmpOr(fs.LowerBound, v, -1) < 0
	case iceberg.OpLTEQ:
		return cmpOr(fs.LowerBound, v, -1) <= 0
	case iceberg.OpGT:
		return cmpOr(fs.UpperBound, v, 1) > 0
	case iceberg.OpGTEQ:
		return cmpOr(fs.UpperBound, v, 1) >= 0
	case iceberg.OpEQ:
		return inRange(fs, v)
	}
	return true
}

// inRange reports whether v might lie within the bounds.
func inRange(fs *v4manifest.FieldStats, v any) bool {
	return cmpOr(fs.LowerBound, v, -1) <= 0 && cmpOr(fs.UpperBound, v, 1) >= 0
}

// cmpOr compares a bound with a literal value, returning unknown when the
// bound is missing, NaN, or of another Go type than the literal (a promoted
// column's old stats, say): callers pass the answer that keeps the file.
func cmpOr(bound, v any, unknown int) int {
	if bound == nil || v == nil || reflect.TypeOf(bound) != reflect.TypeOf(v) || isNaN(bound) || isNaN(v) {
		return unknown
	}
	c, err := compare(bound, v)
	if err != nil {
		return unknown
	}
	return c
}

// compare is v4manifest.CompareValues, guarded against its panic.
func compare(a, b any) (c int, err error) {
	defer func() {
		if recover() != nil {
			c, err = 0, errTypes
		}
	}()
	return v4manifest.CompareValues(a, b)
}

var errTypes = errors.New("values of different types")

func isNaN(v any) bool {
	switch x := v.(type) {
	case float32:
		return math.IsNaN(float64(x))
	case float64:
		return math.IsNaN(x)
	}
	return false
}

// startsWithMightMatch prunes a string column whose bounds, cut to the
// prefix's length, lie wholly above or below the prefix.
func startsWithMightMatch(p iceberg.BoundPredicate, fs *v4manifest.FieldStats) bool {
	lp, ok := p.(iceberg.BoundLiteralPredicate)
	if !ok {
		return true
	}
	prefix, ok := lp.Literal().Any().(string)
	if !ok {
		return true
	}
	if lo, ok := fs.LowerBound.(string); ok && strings.Compare(cut(lo, len(prefix)), prefix) > 0 {
		return false
	}
	if hi, ok := fs.UpperBound.(string); ok && strings.Compare(cut(hi, len(prefix)), prefix) < 0 {
		return false
	}
	return true
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
