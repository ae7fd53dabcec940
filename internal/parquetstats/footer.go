// Package parquetstats reads what a Parquet footer tells about a data or
// column file (row count, schema nodes, per-column stats typed by the
// table schema) and types Iceberg single-value JSON literals. It does no
// I/O of its own: callers hand it an open file.
package parquetstats

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// Footer is what a Parquet footer tells about a data or column file.
type Footer struct {
	NumRows int64
	Size    int64
	// Columns of primitive fields outside lists and maps, by field id.
	Columns map[int]Column
	// Nodes is every schema node that carries a field id (groups too).
	Nodes map[int]validation.FooterColumn
	// Tree is the file's schema for validation.CheckFileSchema: every
	// top-level node with its resolved field id (-1: none), types and
	// per-leaf null counts.
	Tree []validation.FileNode
	// Unidentified are the name paths (a.b.element) of the schema nodes
	// that stand for a field but have no field id, neither written nor
	// from the name mapping.
	Unidentified []string
}

// Column is one top-level primitive column of a footer.
type Column struct {
	Required bool
	Physical parquet.Type
	Stats    *v4manifest.FieldStats // typed when the table schema knows the field
}

// Read reads only the footer of a Parquet file of size bytes (ranged reads
// through r) and derives per-column stats typed by the table schema sc:
// min/max bounds, value and null counts summed over row groups. Bounds are
// reported as not tight: writers may truncate them. It returns an error
// when the footer cannot be read or is corrupt (a panic of the Parquet
// library included).
func Read(r parquet.ReaderAtSeeker, size int64, sc *iceberg.Schema) (fi *Footer, err error) {
	return ReadMapped(r, size, sc, nil)
}

// ReadMapped is Read for a file whose columns without a field id take the
// one name mapping nm (the table's schema.name-mapping.default) gives
// their name path, as the Iceberg spec says readers resolve such files.
// Columns that stay without an id are listed in Footer.Unidentified and
// left out of Columns and Nodes.
func ReadMapped(r parquet.ReaderAtSeeker, size int64, sc *iceberg.Schema, nm iceberg.NameMapping) (fi *Footer, err error) {
	defer func() {
		if p := recover(); p != nil {
			fi, err = nil, fmt.Errorf("corrupt parquet footer: %v", p)
		}
	}()
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	md := pf.MetaData()
	fi = &Footer{NumRows: md.NumRows, Size: size, Columns: map[int]Column{}, Nodes: map[int]validation.FooterColumn{}}
	ids := resolveIDs(md.Schema.Root(), nm)
	fi.Unidentified = ids.unidentified
	fi.Tree = schemaTree(md, ids.ids)
	for n, id := range ids.ids {
		fi.Nodes[id] = footerNode(n)
	}
	for c := 0; c < md.Schema.NumColumns(); c++ {
		col := md.Schema.Column(c)
		if col.MaxRepetitionLevel() > 0 {
			continue // inside a list or map: no stats
		}
		node := col.SchemaNode()
		id, ok := ids.ids[node]
		if !ok {
			continue
		}
		fc := Column{Required: node.RepetitionType() == parquet.Repetitions.Required, Physical: col.PhysicalType()}
		if sc != nil {
			if field, ok := sc.FindFieldByID(id); ok {
				if prim, ok := field.Type.(iceberg.PrimitiveType); ok {
					fc.Stats = columnStats(md, c, prim)
				}
			}
		}
		fi.Columns[id] = fc
	}
	return fi, nil
}

// footerNode is what validation needs of one schema node.
func footerNode(n pqschema.Node) validation.FooterColumn {
	fc := validation.FooterColumn{Required: n.RepetitionType() == parquet.Repetitions.Required}
	if p, ok := n.(*pqschema.PrimitiveNode); ok {
		fc.Leaf = true
		fc.Physical = p.PhysicalType().String()
		fc.TypeLength = p.TypeLength()
	}
	return fc
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
		if c, err := Compare(lo, fs.LowerBound); err == nil && c < 0 {
			fs.LowerBound = lo
		}
		if c, err := Compare(hi, fs.UpperBound); err == nil && c > 0 {
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

// Compare orders two bound values like v4manifest.CompareValues, but
// returns an error instead of panicking when their types differ.
func Compare(a, b any) (c int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("incomparable bounds %T and %T", a, b)
		}
	}()
	return v4manifest.CompareValues(a, b)
}
