package scanplan

import (
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

// Project returns the inclusive projection of f onto a partition spec: a
// filter over the spec's partition tuple that keeps every partition that
// might hold a matching row. Predicates on columns the spec does not
// partition by, on transform terms, or that a transform cannot project,
// become true.
func (f *Filter) Project(spec iceberg.PartitionSpec, sc *iceberg.Schema) *Filter {
	if f.AlwaysTrue() || spec.IsUnpartitioned() {
		return &Filter{expr: iceberg.AlwaysTrue{}}
	}
	projected, err := iceberg.VisitExpr(f.expr, &projector{spec: spec})
	if err != nil {
		return &Filter{expr: iceberg.AlwaysTrue{}}
	}
	pt := spec.PartitionType(sc)
	if pt == nil {
		return &Filter{expr: iceberg.AlwaysTrue{}}
	}
	bound, err := iceberg.BindExpr(iceberg.NewSchema(0, pt.FieldList...), projected, true)
	if err != nil {
		return &Filter{expr: iceberg.AlwaysTrue{}}
	}
	return &Filter{expr: bound}
}

// MatchPartition reports whether a partition tuple (values by partition
// field id, nil for null) might hold rows matching a projected filter. A
// value is exact, so it is evaluated as stats whose bounds are the value.
func (f *Filter) MatchPartition(values map[int]any) bool {
	if f.AlwaysTrue() {
		return true
	}
	fields := make(map[int]*v4manifest.FieldStats, len(values))
	one := int64(1)
	zero := int64(0)
	for id, v := range values {
		fs := &v4manifest.FieldStats{ValueCount: &one, NullValueCount: &zero, NaNValueCount: &zero}
		if v == nil {
			fs.NullValueCount = &one
		} else if isNaN(v) {
			fs.NaNValueCount = &one
		} else {
			fs.LowerBound, fs.UpperBound = v, v
		}
		fields[id] = fs
	}
	return f.MightMatch(Stats{RecordCount: -1, Fields: fields})
}

// projector rewrites a bound, NOT-free row filter into an unbound filter
// over partition field names.
type projector struct{ spec iceberg.PartitionSpec }

func (*projector) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (*projector) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (*projector) VisitNot(iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{} // NOTs were rewritten away; stay inclusive
}
func (*projector) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (*projector) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}
func (*projector) VisitUnbound(iceberg.UnboundPredicate) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{}
}

// VisitBound ANDs the projections of pred through every partition field
// sourced from its column (each is implied by pred).
func (p *projector) VisitBound(pred iceberg.BoundPredicate) iceberg.BooleanExpression {
	if _, ok := pred.Term().(iceberg.BoundReference); !ok {
		return iceberg.AlwaysTrue{}
	}
	var out iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	for _, pf := range p.spec.FieldsBySourceID(pred.Ref().Field().ID) {
		proj, err := safeProject(pf, pred)
		if err == nil && proj != nil {
			out = iceberg.NewAnd(out, proj)
		}
	}
	return out
}

// safeProject is Transform.Project, guarded against panics on odd input.
func safeProject(pf iceberg.PartitionField, pred iceberg.BoundPredicate) (p iceberg.UnboundPredicate, err error) {
	defer func() {
		if recover() != nil {
			p, err = nil, errTypes
		}
	}()
	return pf.Transform.Project(pf.Name, pred)
}
