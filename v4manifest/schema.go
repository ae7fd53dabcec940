package v4manifest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// fieldIDKey is the Arrow metadata key pqarrow maps to Parquet field ids.
const fieldIDKey = "PARQUET:field_id"

// node describes one field of the manifest schema: the single, table-driven
// source of names, ids, types and optionality.
type node struct {
	id       int
	name     string
	typ      arrow.DataType // primitives
	required bool
	children []node // structs
	elem     *node  // lists
}

func prim(id int, name string, t arrow.DataType, required bool) node {
	return node{id: id, name: name, typ: t, required: required}
}

func list(id int, name string, required bool, elem node) node {
	return node{id: id, name: name, required: required, elem: &elem}
}

func strct(id int, name string, required bool, children ...node) node {
	return node{id: id, name: name, required: required, children: children}
}

var (
	i32 = arrow.PrimitiveTypes.Int32
	i64 = arrow.PrimitiveTypes.Int64
	str = arrow.BinaryTypes.String
	bin = arrow.BinaryTypes.Binary
)

var trackingNode = strct(IDTracking, "tracking", true,
	prim(IDStatus, "status", i32, true),
	prim(IDSnapshotID, "snapshot_id", i64, false),
	prim(IDSequenceNumber, "sequence_number", i64, false),
	prim(IDFileSequenceNumber, "file_sequence_number", i64, false),
	prim(IDDVSnapshotID, "dv_snapshot_id", i64, false),
	prim(IDFirstRowID, "first_row_id", i64, false),
	prim(IDDeletedPositions, "deleted_positions", bin, false),
	prim(IDReplacedPositions, "replaced_positions", bin, false),
	prim(IDLatestColumnFileSnapshotID, "latest_column_file_snapshot_id", i64, false),
)

var deletionVectorNode = strct(IDDeletionVector, "deletion_vector", false,
	prim(IDDVLocation, "location", str, true),
	prim(IDDVOffset, "offset", i64, true),
	prim(IDDVSize, "size_in_bytes", i64, true),
	prim(IDDVCardinality, "cardinality", i64, true),
	prim(IDDVKeyMetadata, "key_metadata", bin, false),
)

// File counts are INT32 as Java main writes them (the spec draft says
// long); the reader takes either. dv_cardinality is optional in Parquet
// but set exactly when dv is.
var manifestInfoNode = strct(IDManifestInfo, "manifest_info", false,
	prim(IDAddedFilesCount, "added_files_count", i32, true),
	prim(IDExistingFilesCount, "existing_files_count", i32, true),
	prim(IDDeletedFilesCount, "deleted_files_count", i32, true),
	prim(IDReplacedFilesCount, "replaced_files_count", i32, true),
	prim(IDModifiedFilesCount, "modified_files_count", i32, true),
	prim(IDAddedRowsCount, "added_rows_count", i64, true),
	prim(IDExistingRowsCount, "existing_rows_count", i64, true),
	prim(IDDeletedRowsCount, "deleted_rows_count", i64, true),
	prim(IDReplacedRowsCount, "replaced_rows_count", i64, true),
	prim(IDModifiedRowsCount, "modified_rows_count", i64, true),
	prim(IDMinSequenceNumber, "min_sequence_number", i64, true),
	prim(IDManifestDV, "dv", bin, false),
	prim(IDManifestDVCardinality, "dv_cardinality", i64, false),
)

var columnFileNode = strct(IDColumnFilesEl, "element", true,
	prim(IDCFFormatVersion, "format_version", i32, true),
	list(IDCFFieldIDs, "field_ids", true, prim(IDCFFieldIDsEl, "element", i32, true)),
	prim(IDCFLocation, "location", str, true),
	prim(IDCFFileFormat, "file_format", str, true),
	prim(IDCFFileSize, "file_size_in_bytes", i64, true),
	prim(IDCFKeyMetadata, "key_metadata", bin, false),
	list(IDCFSplitOffsets, "split_offsets", false, prim(IDCFSplitOffsetsEl, "element", i64, true)),
)

// trackedFileNodes builds the row schema. partition and contentStats may
// be nil: empty structs are left out of the file.
func trackedFileNodes(partition, contentStats *node) []node {
	nodes := []node{
		trackingNode,
		prim(IDContentType, "content_type", i32, true),
		prim(IDFormatVersion, "format_version", i32, true),
		prim(IDLocation, "location", str, true),
		prim(IDFileFormat, "file_format", str, true),
		prim(IDRecordCount, "record_count", i64, true),
		prim(IDFileSize, "file_size_in_bytes", i64, true),
		prim(IDSpecID, "spec_id", i32, false),
	}
	if partition != nil {
		nodes = append(nodes, *partition)
	}
	if contentStats != nil {
		nodes = append(nodes, *contentStats)
	}
	return append(nodes,
		prim(IDSortOrderID, "sort_order_id", i32, false),
		deletionVectorNode,
		manifestInfoNode,
		prim(IDKeyMetadata, "key_metadata", bin, false),
		list(IDSplitOffsets, "split_offsets", false, prim(IDSplitOffsetsEl, "element", i64, true)),
		list(IDEqualityIDs, "equality_ids", false, prim(IDEqualityIDsEl, "element", i32, true)),
		list(IDColumnFiles, "column_files", false, columnFileNode),
	)
}

func (n node) arrowType() arrow.DataType {
	switch {
	case n.elem != nil:
		return arrow.ListOfField(n.elem.arrowField())
	case n.children != nil:
		fs := make([]arrow.Field, len(n.children))
		for i, c := range n.children {
			fs[i] = c.arrowField()
		}
		return arrow.StructOf(fs...)
	}
	return n.typ
}

func (n node) arrowField() arrow.Field {
	return arrow.Field{
		Name: n.name, Type: n.arrowType(), Nullable: !n.required,
		Metadata: arrow.NewMetadata([]string{fieldIDKey}, []string{strconv.Itoa(n.id)}),
	}
}

// statsField is one table field that gets a stats struct.
type statsField struct {
	fieldID int
	name    string
	typ     iceberg.Type
}

// statsFields lists the table's fields that carry stats: primitive fields
// not inside a list or map (leaves of nested structs included), ordered by
// field id, plus the row-lineage columns when asked.
func statsFields(sc *iceberg.Schema, rowLineage bool) []statsField {
	var out []statsField
	var walk func(fields []iceberg.NestedField, path []string)
	walk = func(fields []iceberg.NestedField, path []string) {
		for _, f := range fields {
			p := append(append([]string{}, path...), f.Name)
			switch t := f.Type.(type) {
			case *iceberg.StructType:
				walk(t.FieldList, p)
			case iceberg.PrimitiveType:
				if _, ok := StatsBase(f.ID); ok && StatsSupported(t) {
					out = append(out, statsField{fieldID: f.ID, name: strings.Join(p, "_"), typ: t})
				}
			}
		}
	}
	if sc != nil {
		walk(sc.Fields(), nil)
	}
	if rowLineage {
		out = append(out,
			statsField{fieldID: FieldRowID, name: "_row_id", typ: iceberg.PrimitiveTypes.Int64},
			statsField{fieldID: FieldLastUpdatedSequenceNumber, name: "_last_updated_sequence_number", typ: iceberg.PrimitiveTypes.Int64})
	}
	sort.Slice(out, func(i, j int) bool {
		bi, _ := StatsBase(out[i].fieldID)
		bj, _ := StatsBase(out[j].fieldID)
		return bi < bj
	})
	return out
}

// StatsSupported tells whether the v4 stats layout holds t: geo, variant
// and unknown have another layout, get no stats struct and are not carried.
func StatsSupported(t iceberg.PrimitiveType) bool {
	switch t.(type) {
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.DecimalType, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.StringType, iceberg.UUIDType,
		iceberg.FixedType, iceberg.BinaryType:
		return true
	}
	return false
}

func icebergArrow(t iceberg.Type) (arrow.DataType, error) {
	return table.TypeToArrowType(t, false, false)
}

func contentStatsNode(fields []statsField) (*node, error) {
	if len(fields) == 0 {
		return nil, nil
	}
	n := strct(IDContentStats, "content_stats", false)
	for _, f := range fields {
		base, _ := StatsBase(f.fieldID)
		at, err := icebergArrow(f.typ)
		if err != nil {
			return nil, fmt.Errorf("stats type of field %d: %w", f.fieldID, err)
		}
		kids := []node{
			prim(base+offLowerBound, "lower_bound", at, false),
			prim(base+offUpperBound, "upper_bound", at, false),
			prim(base+offTightBounds, "tight_bounds", arrow.FixedWidthTypes.Boolean, false),
			prim(base+offValueCount, "value_count", i64, false),
			prim(base+offNullCount, "null_value_count", i64, false),
		}
		switch f.typ.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
			kids = append(kids, prim(base+offNaNCount, "nan_value_count", i64, false))
		case iceberg.StringType, iceberg.BinaryType:
			kids = append(kids, prim(base+offAvgSize, "avg_value_size_in_bytes", i32, false))
		}
		n.children = append(n.children, strct(base, f.name, false, kids...))
	}
	return &n, nil
}

// partitionNode is the union of the partition types of all specs (field
// ids = partition field ids), nil when no spec has fields.
func partitionNode(sc *iceberg.Schema, specs []iceberg.PartitionSpec) (*node, error) {
	seen := map[int]bool{}
	n := strct(IDPartition, "partition", false)
	for _, spec := range specs {
		for _, f := range spec.Fields() {
			if seen[f.FieldID] {
				continue
			}
			seen[f.FieldID] = true
			if sc == nil {
				return nil, fmt.Errorf("partition specs need the table schema")
			}
			src, ok := sc.FindFieldByID(f.SourceID())
			if !ok {
				return nil, fmt.Errorf("partition field %d: source %d not in schema", f.FieldID, f.SourceID())
			}
			at, err := icebergArrow(f.Transform.ResultType(src.Type))
			if err != nil {
				return nil, fmt.Errorf("partition field %d: %w", f.FieldID, err)
			}
			n.children = append(n.children, prim(f.FieldID, f.Name, at, false))
		}
	}
	if len(n.children) == 0 {
		return nil, nil
	}
	sort.Slice(n.children, func(i, j int) bool { return n.children[i].id < n.children[j].id })
	return &n, nil
}

// ArrowSchema returns the Arrow (and so Parquet) schema of a manifest for
// a table schema and its partition specs.
func ArrowSchema(sc *iceberg.Schema, specs []iceberg.PartitionSpec, rowLineage bool) (*arrow.Schema, error) {
	pn, err := partitionNode(sc, specs)
	if err != nil {
		return nil, err
	}
	cs, err := contentStatsNode(statsFields(sc, rowLineage))
	if err != nil {
		return nil, err
	}
	nodes := trackedFileNodes(pn, cs)
	fields := make([]arrow.Field, len(nodes))
	for i, n := range nodes {
		fields[i] = n.arrowField()
	}
	return arrow.NewSchema(fields, nil), nil
}

// fieldID reads the Parquet field id of an Arrow field (-1 when absent).
func fieldID(f arrow.Field) int {
	if v, ok := f.Metadata.GetValue(fieldIDKey); ok {
		if id, err := strconv.Atoi(v); err == nil {
			return id
		}
	}
	return -1
}
