package service

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// footerInfo is what a Parquet footer tells about a data or column file.
type footerInfo struct {
	NumRows int64
	Size    int64
	// Columns of primitive fields outside lists and maps, by field id.
	Columns map[int]footerColumn
	// Nodes is every schema node that carries a field id (groups too).
	Nodes map[int]validation.FooterColumn
	err   string // why the footer could not be read
}

type footerColumn struct {
	Required bool
	Physical parquet.Type
	Stats    *v4manifest.FieldStats // typed when the table schema knows the field
}

// readFooter reads only the footer of a Parquet file (ranged reads) and
// derives per-column stats typed by the table schema: min/max bounds,
// value and null counts summed over row groups. Bounds are reported as not
// tight: writers may truncate them.
func readFooter(ctx context.Context, io storage.FileIO, location string, sc *iceberg.Schema) (fi *footerInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt parquet footer: %v", p)
		}
	}()
	f, err := io.Open(ctx, location)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	md := pf.MetaData()
	fi = &footerInfo{NumRows: md.NumRows, Size: st.Size(), Columns: map[int]footerColumn{}, Nodes: map[int]validation.FooterColumn{}}
	schema := md.Schema
	var walk func(n pqschema.Node)
	walk = func(n pqschema.Node) {
		if id := int(n.FieldID()); id >= 0 {
			fc := validation.FooterColumn{Required: n.RepetitionType() == parquet.Repetitions.Required}
			if p, ok := n.(*pqschema.PrimitiveNode); ok {
				fc.Leaf = true
				fc.Physical = p.PhysicalType().String()
				fc.TypeLength = p.TypeLength()
			}
			fi.Nodes[id] = fc
		}
		if g, ok := n.(*pqschema.GroupNode); ok {
			for i := 0; i < g.NumFields(); i++ {
				walk(g.Field(i))
			}
		}
	}
	walk(schema.Root())
	for c := 0; c < schema.NumColumns(); c++ {
		col := schema.Column(c)
		if col.MaxRepetitionLevel() > 0 {
			continue // inside a list or map: no stats
		}
		node := col.SchemaNode()
		id := int(node.FieldID())
		fc := footerColumn{Required: node.RepetitionType() == parquet.Repetitions.Required, Physical: col.PhysicalType()}
		if field, ok := sc.FindFieldByID(id); ok && sc != nil {
			if prim, ok := field.Type.(iceberg.PrimitiveType); ok {
				fc.Stats = columnStats(md, c, prim)
			}
		}
		fi.Columns[id] = fc
	}
	return fi, nil
}

func columnStats(md *metadata.FileMetaData, c int, t iceberg.PrimitiveType) *v4manifest.FieldStats {
	fs := &v4manifest.FieldStats{}
	var values, nulls int64
	countsOK := true
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		cc, err := md.RowGroup(rg).ColumnChunk(c)
		if err != nil {
			return nil
		}
		values += cc.NumValues()
		set, _ := cc.StatsSet()
		if !set {
			countsOK = false
			fs.LowerBound, fs.UpperBound = nil, nil
			continue
		}
		s, err := cc.Statistics()
		if err != nil || s == nil {
			countsOK = false
			continue
		}
		if s.HasNullCount() {
			nulls += s.NullCount()
		} else {
			countsOK = false
		}
		if !s.HasMinMax() {
			continue
		}
		lo, hi := statValue(s, t, true), statValue(s, t, false)
		if lo == nil || hi == nil {
			continue
		}
		if rg == 0 || fs.LowerBound == nil {
			fs.LowerBound, fs.UpperBound = lo, hi
			continue
		}
		if c, err := compareAny(lo, fs.LowerBound); err == nil && c < 0 {
			fs.LowerBound = lo
		}
		if c, err := compareAny(hi, fs.UpperBound); err == nil && c > 0 {
			fs.UpperBound = hi
		}
	}
	fs.ValueCount = &values
	if countsOK {
		fs.NullValueCount = &nulls
	}
	if fs.LowerBound != nil {
		fs.TightBounds = new(bool)
	}
	return fs
}

// statValue converts a Parquet min (or max) into the Go value of type t;
// nil when the combination is not handled (the bound stays unknown).
func statValue(s metadata.TypedStatistics, t iceberg.PrimitiveType, min bool) any {
	pick := func(a, b any) any {
		if min {
			return a
		}
		return b
	}
	switch st := s.(type) {
	case *metadata.BooleanStatistics:
		if _, ok := t.(iceberg.BooleanType); ok {
			return pick(st.Min(), st.Max())
		}
	case *metadata.Int32Statistics:
		v := pick(st.Min(), st.Max()).(int32)
		switch t.(type) {
		case iceberg.Int32Type:
			return v
		case iceberg.DateType:
			return iceberg.Date(v)
		}
	case *metadata.Int64Statistics:
		v := pick(st.Min(), st.Max()).(int64)
		switch t.(type) {
		case iceberg.Int64Type:
			return v
		case iceberg.TimeType:
			return iceberg.Time(v)
		case iceberg.TimestampType, iceberg.TimestampTzType:
			return iceberg.Timestamp(v)
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			return iceberg.TimestampNano(v)
		}
	case *metadata.Float32Statistics:
		if _, ok := t.(iceberg.Float32Type); ok {
			return pick(st.Min(), st.Max())
		}
	case *metadata.Float64Statistics:
		if _, ok := t.(iceberg.Float64Type); ok {
			return pick(st.Min(), st.Max())
		}
	case *metadata.ByteArrayStatistics:
		v := pick(st.Min(), st.Max()).(parquet.ByteArray)
		switch t.(type) {
		case iceberg.StringType:
			return string(v)
		case iceberg.BinaryType:
			return append([]byte{}, v...)
		}
	case *metadata.FixedLenByteArrayStatistics:
		v := pick(st.Min(), st.Max()).(parquet.FixedLenByteArray)
		switch t.(type) {
		case iceberg.UUIDType:
			if u, err := uuid.FromBytes(v); err == nil {
				return u
			}
		case iceberg.FixedType:
			return append([]byte{}, v...)
		}
	}
	return nil
}

func compareAny(a, b any) (c int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("incomparable bounds %T and %T", a, b)
		}
	}()
	return v4manifest.CompareValues(a, b)
}
