package restread

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/substrait"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/lakehold/catalog/internal/stitch"
)

// readColumns says what `catalog read` reads from each task and what it
// writes: the output columns (selected fields, then the row-lineage ones),
// and, read in between, the top-level fields only the filter needs.
type readColumns struct {
	out       []iceberg.NestedField // selected top-level fields
	extra     []iceberg.NestedField // fields only the filter reads
	lineage   []int                 // row-lineage field ids, when asked
	readIDs   []int                 // out, extra, lineage: what stitch reads
	outSchema *arrow.Schema
	// filter evaluates the row filter over out+extra (the record's first
	// columns); nil when every row is kept.
	filter   expr.Expression
	extSet   *expr.ExtensionRegistry
	keepNone bool // the filter binds to always-false
}

// chooseColumns resolves --select (top-level names; all fields when
// empty), --filter and --row-lineage against sc. It fails on an unknown
// or nested name and on a filter that does not bind.
func chooseColumns(sc *iceberg.Schema, sel, filter string, lineage bool) (*readColumns, error) {
	c := &readColumns{}
	top := map[string]iceberg.NestedField{}
	for _, f := range sc.Fields() {
		top[f.Name] = f
	}
	if sel == "" {
		c.out = sc.Fields()
	} else {
		for _, name := range strings.Split(sel, ",") {
			f, ok := top[strings.TrimSpace(name)]
			if !ok {
				return nil, fmt.Errorf("read: --select: %q is not a top-level column of the table", name)
			}
			c.out = append(c.out, f)
		}
	}
	if err := c.addFilter(sc, filter); err != nil {
		return nil, err
	}
	if lineage {
		c.lineage = []int{stitch.RowIDFieldID, stitch.LastUpdatedFieldID}
	}
	for _, f := range append(append([]iceberg.NestedField{}, c.out...), c.extra...) {
		c.readIDs = append(c.readIDs, f.ID)
	}
	c.readIDs = append(c.readIDs, c.lineage...)
	var err error
	c.outSchema, err = outputSchema(c.out, lineage)
	return c, err
}

// addFilter finds the top-level fields the filter needs besides the
// selected ones and binds it to out+extra, the columns as read.
func (c *readColumns) addFilter(sc *iceberg.Schema, filter string) error {
	flt, err := bindFilter(filter, sc)
	if err != nil || flt == nil {
		return err
	}
	parents, err := iceberg.IndexParents(sc)
	if err != nil {
		return err
	}
	have := map[int]bool{}
	for _, f := range c.out {
		have[f.ID] = true
	}
	for _, id := range flt.FieldIDs() {
		for p, ok := parents[id]; ok; p, ok = parents[id] {
			id = p
		}
		if !have[id] {
			have[id] = true
			f, _ := sc.FindFieldByID(id)
			c.extra = append(c.extra, f)
		}
	}
	sub := iceberg.NewSchema(sc.ID, append(append([]iceberg.NestedField{}, c.out...), c.extra...)...)
	bound, err := bindFilter(filter, sub)
	if err != nil {
		return err
	}
	if bound == nil {
		return nil
	}
	if bound.Expr().Equals(iceberg.AlwaysFalse{}) {
		c.keepNone = true
		return nil
	}
	c.extSet, c.filter, err = substrait.ConvertExpr(sub, bound.Expr(), true)
	if err != nil {
		return fmt.Errorf("read: --filter: %w", err)
	}
	return nil
}

// outputSchema is the Arrow schema of the output, typed as stitch types
// its columns.
func outputSchema(out []iceberg.NestedField, lineage bool) (*arrow.Schema, error) {
	fields := make([]arrow.Field, 0, len(out)+2)
	for _, f := range out {
		at, err := table.TypeToArrowType(f.Type, true, false)
		if err != nil {
			return nil, fmt.Errorf("read: column %s: %w", f.Name, err)
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: at, Nullable: true, Metadata: fieldID(f.ID)})
	}
	if lineage {
		fields = append(fields,
			arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID(stitch.RowIDFieldID)},
			arrow.Field{Name: "_last_updated_sequence_number", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID(stitch.LastUpdatedFieldID)})
	}
	return arrow.NewSchema(fields, nil), nil
}

func fieldID(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
}

// selectNames is the plan's select: the output fields and the filter's.
func (c *readColumns) selectNames() []string {
	var names []string
	for _, f := range append(append([]iceberg.NestedField{}, c.out...), c.extra...) {
		names = append(names, f.Name)
	}
	return names
}

// apply drops the rows the filter does not match and keeps the output
// columns. It takes ownership of rec.
func (c *readColumns) apply(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer rec.Release()
	if c.keepNone {
		rec = rec.NewSlice(0, 0)
		defer rec.Release()
	} else if c.filter != nil {
		ectx := exprs.WithExtensionIDSet(ctx, exprs.NewExtensionSetDefault(*c.extSet))
		in := compute.NewDatumWithoutOwning(rec)
		mask, err := exprs.ExecuteScalarExpression(ectx, rec.Schema(), c.filter, in)
		if err != nil {
			return nil, fmt.Errorf("filter: %w", err)
		}
		defer mask.Release()
		res, err := compute.Filter(ctx, in, mask, *compute.DefaultFilterOptions())
		if err != nil {
			return nil, fmt.Errorf("filter: %w", err)
		}
		rec = res.(*compute.RecordDatum).Value
		defer rec.Release()
	}
	cols := make([]arrow.Array, 0, len(c.out)+len(c.lineage))
	for i := range c.out {
		cols = append(cols, rec.Column(i))
	}
	for i := range c.lineage {
		cols = append(cols, rec.Column(len(c.out)+len(c.extra)+i))
	}
	return array.NewRecordBatch(c.outSchema, cols, rec.NumRows()), nil
}
