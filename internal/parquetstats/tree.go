package parquetstats

import (
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakehold/catalog/validation"
)

// schemaTree describes the file's schema for validation.CheckFileSchema:
// every top-level node with its field id (ids as resolved, -1 for none),
// shape, types and, for leaves, null counts summed over row groups.
func schemaTree(md *metadata.FileMetaData, ids map[pqschema.Node]int) []validation.FileNode {
	root := md.Schema.Root()
	out := make([]validation.FileNode, 0, root.NumFields())
	for i := 0; i < root.NumFields(); i++ {
		c := root.Field(i)
		out = append(out, treeNode(md, ids, c, c.Name()))
	}
	return out
}

func treeNode(md *metadata.FileMetaData, ids map[pqschema.Node]int, n pqschema.Node, path string) validation.FileNode {
	fn := validation.FileNode{Name: path, FieldID: -1, NonNull: n.RepetitionType() != parquet.Repetitions.Optional}
	if id, ok := ids[n]; ok {
		fn.FieldID = id
	}
	if p, ok := n.(*pqschema.PrimitiveNode); ok {
		fn.Kind = validation.NodePrimitive
		fn.Physical = p.PhysicalType().String()
		fn.TypeLength = p.TypeLength()
		fn.Logical = logicalOf(p)
		fn.Nulls, fn.NullsKnown = leafNulls(md, md.Schema.ColumnIndexByNode(p))
		return fn
	}
	g := n.(*pqschema.GroupNode)
	if elem := listElement(g); elem != nil {
		fn.Kind = validation.NodeList
		fn.Children = []validation.FileNode{treeNode(md, ids, elem, path+".element")}
		return fn
	}
	if key, value := mapEntries(g); key != nil {
		fn.Kind = validation.NodeMap
		fn.Children = []validation.FileNode{treeNode(md, ids, key, path+".key")}
		if value != nil {
			fn.Children = append(fn.Children, treeNode(md, ids, value, path+".value"))
		}
		return fn
	}
	fn.Kind = validation.NodeStruct
	for i := 0; i < g.NumFields(); i++ {
		c := g.Field(i)
		fn.Children = append(fn.Children, treeNode(md, ids, c, path+"."+c.Name()))
	}
	return fn
}

// leafNulls sums column c's null counts over the row groups; known is
// false when a chunk gives no null count. The count is read as written,
// not through the reader's statistics: those drop a chunk's statistics
// when its min/max may be wrong (old writers' binary and decimal bounds,
// PARQUET-251), and null counts never were.
func leafNulls(md *metadata.FileMetaData, c int) (nulls int64, known bool) {
	if c < 0 || md.FileMetaData == nil || len(md.RowGroups) != md.NumRowGroups() {
		return 0, false
	}
	for _, rg := range md.RowGroups {
		if rg == nil || c >= len(rg.Columns) || rg.Columns[c] == nil {
			return 0, false
		}
		meta := rg.Columns[c].MetaData
		if meta == nil || meta.Statistics == nil || !meta.Statistics.IsSetNullCount() || meta.Statistics.GetNullCount() < 0 {
			return 0, false // encrypted metadata, no statistics or no count
		}
		nulls += meta.Statistics.GetNullCount()
	}
	return nulls, true
}

// logicalOf is a leaf's logical annotation (arrow-go maps a legacy
// converted type to its logical type when the file has only that).
func logicalOf(p *pqschema.PrimitiveNode) validation.Logical {
	switch lt := p.LogicalType().(type) {
	case nil, pqschema.NoLogicalType:
		return validation.Logical{}
	case pqschema.StringLogicalType:
		return validation.Logical{Type: "STRING"}
	case pqschema.EnumLogicalType:
		return validation.Logical{Type: "ENUM"}
	case pqschema.JSONLogicalType:
		return validation.Logical{Type: "JSON"}
	case pqschema.BSONLogicalType:
		return validation.Logical{Type: "BSON"}
	case pqschema.DateLogicalType:
		return validation.Logical{Type: "DATE"}
	case pqschema.UUIDLogicalType:
		return validation.Logical{Type: "UUID"}
	case pqschema.TimeLogicalType:
		return validation.Logical{Type: "TIME", Unit: unitName(lt.TimeUnit()), UTC: lt.IsAdjustedToUTC()}
	case pqschema.TimestampLogicalType:
		return validation.Logical{Type: "TIMESTAMP", Unit: unitName(lt.TimeUnit()), UTC: lt.IsAdjustedToUTC(), FromConverted: lt.IsFromConvertedType()}
	case pqschema.DecimalLogicalType:
		return validation.Logical{Type: "DECIMAL", Precision: int(lt.Precision()), Scale: int(lt.Scale())}
	case pqschema.IntLogicalType:
		return validation.Logical{Type: "INT", BitWidth: int(lt.BitWidth()), Signed: lt.IsSigned()}
	default:
		return validation.Logical{Type: lt.String()}
	}
}

func unitName(u pqschema.TimeUnitType) string {
	switch u {
	case pqschema.TimeUnitMillis:
		return "MILLIS"
	case pqschema.TimeUnitMicros:
		return "MICROS"
	case pqschema.TimeUnitNanos:
		return "NANOS"
	}
	return "UNKNOWN"
}
