package validation

import (
	"testing"

	"github.com/apache/iceberg-go"
)

// leaf builds a primitive file node.
func leaf(id int, physical string, l Logical, nonNull bool, nulls int64) FileNode {
	return FileNode{Name: "c", FieldID: id, Kind: NodePrimitive, NonNull: nonNull, Physical: physical, Logical: l, Nulls: nulls, NullsKnown: true}
}

func TestLeafHolds(t *testing.T) {
	str := Logical{Type: "STRING"}
	for _, tc := range []struct {
		typ  iceberg.PrimitiveType
		n    FileNode
		want bool
	}{
		{iceberg.PrimitiveTypes.Bool, leaf(1, "BOOLEAN", Logical{}, true, 0), true},
		{iceberg.PrimitiveTypes.Int32, leaf(1, "INT32", Logical{}, true, 0), true},
		{iceberg.PrimitiveTypes.Int32, leaf(1, "INT32", Logical{Type: "INT", BitWidth: 16, Signed: true}, true, 0), true},
		{iceberg.PrimitiveTypes.Int32, leaf(1, "INT32", Logical{Type: "INT", BitWidth: 32}, true, 0), false},
		{iceberg.PrimitiveTypes.Int32, leaf(1, "INT32", Logical{Type: "INT", BitWidth: 8}, true, 0), true}, // pyarrow's uint8
		{iceberg.PrimitiveTypes.Int32, leaf(1, "INT32", Logical{Type: "INT", BitWidth: 16}, true, 0), true},
		{iceberg.PrimitiveTypes.Int64, leaf(1, "INT64", Logical{Type: "INT", BitWidth: 64}, true, 0), false},
		{iceberg.PrimitiveTypes.Int32, leaf(1, "INT64", Logical{}, true, 0), false},
		{iceberg.PrimitiveTypes.Int64, leaf(1, "INT64", Logical{Type: "INT", BitWidth: 64, Signed: true}, true, 0), true},
		{iceberg.PrimitiveTypes.Int64, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS"}, true, 0), false},
		{iceberg.PrimitiveTypes.Float32, leaf(1, "FLOAT", Logical{}, true, 0), true},
		{iceberg.PrimitiveTypes.Float64, leaf(1, "DOUBLE", Logical{}, true, 0), true},
		{iceberg.PrimitiveTypes.Float64, leaf(1, "BYTE_ARRAY", str, true, 0), false},
		{iceberg.PrimitiveTypes.Float64, leaf(1, "FLOAT", Logical{}, true, 0), false},
		{iceberg.PrimitiveTypes.Date, leaf(1, "INT32", Logical{Type: "DATE"}, true, 0), true},
		{iceberg.PrimitiveTypes.Date, leaf(1, "INT32", Logical{}, true, 0), false},
		{iceberg.PrimitiveTypes.Time, leaf(1, "INT64", Logical{Type: "TIME", Unit: "MICROS"}, true, 0), true},
		{iceberg.PrimitiveTypes.Time, leaf(1, "INT64", Logical{Type: "TIME", Unit: "MICROS", UTC: true}, true, 0), true}, // pyarrow's time64[us]
		{iceberg.PrimitiveTypes.Time, leaf(1, "INT64", Logical{Type: "TIME", Unit: "NANOS"}, true, 0), false},
		{iceberg.PrimitiveTypes.Time, leaf(1, "INT32", Logical{Type: "TIME", Unit: "MILLIS"}, true, 0), false},
		{iceberg.PrimitiveTypes.Timestamp, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS"}, true, 0), true},
		{iceberg.PrimitiveTypes.Timestamp, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS", UTC: true}, true, 0), false},
		{iceberg.PrimitiveTypes.Timestamp, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS", UTC: true, FromConverted: true}, true, 0), true},
		{iceberg.PrimitiveTypes.Timestamp, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MILLIS"}, true, 0), false},
		{iceberg.PrimitiveTypes.Timestamp, leaf(1, "INT96", Logical{}, true, 0), false},
		{iceberg.PrimitiveTypes.TimestampTz, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS", UTC: true}, true, 0), true},
		{iceberg.PrimitiveTypes.TimestampTz, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS"}, true, 0), false},
		{iceberg.PrimitiveTypes.TimestampNs, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "NANOS"}, true, 0), true},
		{iceberg.PrimitiveTypes.TimestampTzNs, leaf(1, "INT64", Logical{Type: "TIMESTAMP", Unit: "MICROS", UTC: true}, true, 0), false},
		{iceberg.PrimitiveTypes.String, leaf(1, "BYTE_ARRAY", str, true, 0), true},
		{iceberg.PrimitiveTypes.String, leaf(1, "BYTE_ARRAY", Logical{}, true, 0), false},
		{iceberg.PrimitiveTypes.String, leaf(1, "BYTE_ARRAY", Logical{Type: "ENUM"}, true, 0), true}, // parquet-avro's enums
		{iceberg.PrimitiveTypes.String, leaf(1, "BYTE_ARRAY", Logical{Type: "JSON"}, true, 0), true},
		{iceberg.PrimitiveTypes.String, leaf(1, "BYTE_ARRAY", Logical{Type: "BSON"}, true, 0), false},
		{iceberg.PrimitiveTypes.String, leaf(1, "FIXED_LEN_BYTE_ARRAY", str, true, 0), false},
		{iceberg.PrimitiveTypes.Binary, leaf(1, "BYTE_ARRAY", Logical{Type: "BSON"}, true, 0), true},
		{iceberg.PrimitiveTypes.Binary, leaf(1, "BYTE_ARRAY", Logical{Type: "JSON"}, true, 0), false},
		{iceberg.PrimitiveTypes.Binary, leaf(1, "BYTE_ARRAY", Logical{}, true, 0), true},
		{iceberg.PrimitiveTypes.Binary, leaf(1, "BYTE_ARRAY", str, true, 0), false},
		{iceberg.PrimitiveTypes.UUID, FileNode{Kind: NodePrimitive, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 16}, true},
		{iceberg.PrimitiveTypes.UUID, FileNode{Kind: NodePrimitive, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 16, Logical: Logical{Type: "UUID"}}, true},
		{iceberg.PrimitiveTypes.UUID, FileNode{Kind: NodePrimitive, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 15}, false},
		{iceberg.FixedTypeOf(4), FileNode{Kind: NodePrimitive, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 4}, true},
		{iceberg.FixedTypeOf(4), FileNode{Kind: NodePrimitive, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 5}, false},
		{iceberg.DecimalTypeOf(9, 2), leaf(1, "INT32", Logical{Type: "DECIMAL", Precision: 9, Scale: 2}, true, 0), true},
		{iceberg.DecimalTypeOf(10, 2), leaf(1, "INT32", Logical{Type: "DECIMAL", Precision: 10, Scale: 2}, true, 0), false},
		{iceberg.DecimalTypeOf(10, 2), leaf(1, "INT64", Logical{Type: "DECIMAL", Precision: 10, Scale: 2}, true, 0), true},
		{iceberg.DecimalTypeOf(10, 2), leaf(1, "INT64", Logical{Type: "DECIMAL", Precision: 10, Scale: 3}, true, 0), false},
		{iceberg.DecimalTypeOf(38, 2), FileNode{Kind: NodePrimitive, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 16, Logical: Logical{Type: "DECIMAL", Precision: 38, Scale: 2}}, true},
	} {
		if got := leafHolds(tc.typ, &tc.n); got != tc.want {
			t.Errorf("%s in %s: %v, want %v", tc.typ, describe(&tc.n), got, tc.want)
		}
	}
}

func nestedSchema() *iceberg.Schema {
	return iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 3, Name: "tags", Type: &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}},
		iceberg.NestedField{ID: 5, Name: "props", Type: &iceberg.MapType{KeyID: 6, KeyType: iceberg.PrimitiveTypes.String, ValueID: 7, ValueType: iceberg.PrimitiveTypes.Int32}},
		iceberg.NestedField{ID: 8, Name: "pt", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 9, Name: "x", Type: iceberg.PrimitiveTypes.Float64, Required: true},
			{ID: 10, Name: "y", Type: iceberg.PrimitiveTypes.Float64}}}})
}

// goodTree is a file that fits nestedSchema, as pyarrow writes it.
func goodTree() []FileNode {
	str := Logical{Type: "STRING"}
	return []FileNode{
		leaf(1, "INT64", Logical{}, true, 0),
		leaf(2, "DOUBLE", Logical{}, false, 3),
		{Name: "tags", FieldID: 3, Kind: NodeList, Children: []FileNode{leaf(4, "BYTE_ARRAY", str, true, 0)}},
		{Name: "props", FieldID: 5, Kind: NodeMap, Children: []FileNode{leaf(6, "BYTE_ARRAY", str, true, 0), leaf(7, "INT32", Logical{}, false, 2)}},
		{Name: "pt", FieldID: 8, Kind: NodeStruct, Children: []FileNode{leaf(9, "DOUBLE", Logical{}, true, 0), leaf(10, "DOUBLE", Logical{}, false, 1)}},
		leaf(99, "BYTE_ARRAY", Logical{}, false, 7), // unknown id: ignored
	}
}

func TestCheckFileSchema(t *testing.T) {
	sc := nestedSchema()
	older := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 2, Name: "score", Type: iceberg.PrimitiveTypes.Float32})
	for _, tc := range []struct {
		name    string
		history []*iceberg.Schema
		edit    func(tr []FileNode) []FileNode
		want    string
	}{
		{"fits", nil, func(tr []FileNode) []FileNode { return tr }, ""},
		{"optional field absent", nil, func(tr []FileNode) []FileNode { return tr[:1] }, ""},
		{"required field absent", nil, func(tr []FileNode) []FileNode { return tr[1:] }, ReasonRequiredFieldMissing},
		{"required nested child absent", nil, func(tr []FileNode) []FileNode { tr[4].Children = tr[4].Children[1:]; return tr }, ReasonRequiredFieldMissing},
		{"strings in a double", nil, func(tr []FileNode) []FileNode {
			tr[1] = leaf(2, "BYTE_ARRAY", Logical{Type: "STRING"}, false, 0)
			return tr
		}, ReasonFileTypeMismatch},
		{"optional required field with 0 nulls", nil, func(tr []FileNode) []FileNode { tr[0].NonNull = false; return tr }, ""},
		{"null in a required field", nil, func(tr []FileNode) []FileNode { tr[0].NonNull, tr[0].Nulls = false, 1; return tr }, ReasonRequiredFieldNulls},
		{"unknown null count", nil, func(tr []FileNode) []FileNode { tr[0].NonNull, tr[0].NullsKnown = false, false; return tr }, ReasonRequiredFieldNulls},
		{"null in a required struct child", nil, func(tr []FileNode) []FileNode {
			tr[4].Children[0].NonNull, tr[4].Children[0].Nulls = false, 2
			return tr
		}, ReasonRequiredFieldNulls},
		{"null in a required list element", nil, func(tr []FileNode) []FileNode {
			tr[2].Children[0].NonNull, tr[2].Children[0].Nulls = false, 1
			return tr
		}, ReasonRequiredFieldNulls},
		{"list element type", nil, func(tr []FileNode) []FileNode { tr[2].Children[0] = leaf(4, "INT32", Logical{}, true, 0); return tr }, ReasonFileTypeMismatch},
		{"list element id", nil, func(tr []FileNode) []FileNode { tr[2].Children[0].FieldID = 44; return tr }, ReasonFileTypeMismatch},
		{"map value type", nil, func(tr []FileNode) []FileNode { tr[3].Children[1] = leaf(7, "DOUBLE", Logical{}, false, 0); return tr }, ReasonFileTypeMismatch},
		{"map key nulls", nil, func(tr []FileNode) []FileNode {
			tr[3].Children[0].NonNull, tr[3].Children[0].Nulls = false, 1
			return tr
		}, ReasonRequiredFieldNulls},
		{"map without value", nil, func(tr []FileNode) []FileNode { tr[3].Children = tr[3].Children[:1]; return tr }, ReasonFileTypeMismatch},
		{"list as a struct", nil, func(tr []FileNode) []FileNode { tr[2].Kind = NodeStruct; return tr }, ReasonFileTypeMismatch},
		{"struct as a leaf", nil, func(tr []FileNode) []FileNode { tr[4] = leaf(8, "INT32", Logical{}, false, 0); return tr }, ReasonFileTypeMismatch},
		{"int for long without history", nil, func(tr []FileNode) []FileNode { tr[0] = leaf(1, "INT32", Logical{}, true, 0); return tr }, ReasonFileTypeMismatch},
		{"int for long promoted", []*iceberg.Schema{older, sc}, func(tr []FileNode) []FileNode { tr[0] = leaf(1, "INT32", Logical{}, true, 0); return tr }, ""},
		{"float for double promoted", []*iceberg.Schema{older, sc}, func(tr []FileNode) []FileNode { tr[1] = leaf(2, "FLOAT", Logical{}, false, 0); return tr }, ""},
		{"float for a double nested never float", []*iceberg.Schema{older, sc}, func(tr []FileNode) []FileNode {
			tr[4].Children[1] = leaf(10, "FLOAT", Logical{}, false, 0)
			return tr
		}, ReasonFileTypeMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := FileCheck{Use: UseData, Kind: "Data file", Name: "data/a.parquet", Schema: sc, History: tc.history}
			_, err := CheckFileSchema(c, tc.edit(goodTree()))
			if got := reasonOf(err); got != tc.want {
				t.Fatalf("reason %q, want %q (%v)", got, tc.want, err)
			}
			if err != nil {
				d := err.(*Error).Details
				if d["file"] != "data/a.parquet" || d["field"] == nil || d["field-id"] == nil {
					t.Fatalf("details %v lack the file, field or id", d)
				}
			}
		})
	}
}

func TestCheckFileSchemaDecimalPromotion(t *testing.T) {
	sc := iceberg.NewSchema(1, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.DecimalTypeOf(12, 2)})
	old := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.DecimalTypeOf(8, 2)})
	n := []FileNode{leaf(1, "INT32", Logical{Type: "DECIMAL", Precision: 8, Scale: 2}, false, 0)}
	c := FileCheck{Use: UseData, Kind: "Data file", Name: "a", Schema: sc}
	if _, err := CheckFileSchema(c, n); reasonOf(err) != ReasonFileTypeMismatch {
		t.Fatalf("decimal(8,2) for decimal(12,2) without history: %v", err)
	}
	c.History = []*iceberg.Schema{old, sc}
	if _, err := CheckFileSchema(c, n); err != nil {
		t.Fatalf("decimal(8,2) written before the widening: %v", err)
	}
}

// TestCheckFileSchemaDatePromotion: format v3 lets a date become a
// timestamp or timestamp_ns (not a timestamptz); a file written before
// holds INT32 DATE.
func TestCheckFileSchemaDatePromotion(t *testing.T) {
	n := []FileNode{leaf(1, "INT32", Logical{Type: "DATE"}, false, 0)}
	old := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date})
	for _, tc := range []struct {
		to   iceberg.PrimitiveType
		want string
	}{
		{iceberg.PrimitiveTypes.Timestamp, ""},
		{iceberg.PrimitiveTypes.TimestampNs, ""},
		{iceberg.PrimitiveTypes.TimestampTz, ReasonFileTypeMismatch},
		{iceberg.PrimitiveTypes.TimestampTzNs, ReasonFileTypeMismatch},
		{iceberg.PrimitiveTypes.Int64, ReasonFileTypeMismatch},
	} {
		sc := iceberg.NewSchema(1, iceberg.NestedField{ID: 1, Name: "d", Type: tc.to})
		c := FileCheck{Use: UseData, Kind: "Data file", Name: "a", Schema: sc}
		if _, err := CheckFileSchema(c, n); reasonOf(err) != ReasonFileTypeMismatch {
			t.Errorf("date for %s without history: %v", tc.to, err)
		}
		c.History = []*iceberg.Schema{old, sc}
		if _, err := CheckFileSchema(c, n); reasonOf(err) != tc.want {
			t.Errorf("date written before the change to %s: %v, want %q", tc.to, err, tc.want)
		}
	}
}

func TestCheckFileSchemaColumnFiles(t *testing.T) {
	sc := nestedSchema()
	c := FileCheck{Use: UseColumn, Kind: "Column file", Name: "data/c.parquet", Schema: sc, Fields: []int{1}}
	opt := func(nulls int64) []FileNode { return []FileNode{leaf(1, "INT64", Logical{}, false, nulls)} }
	if _, err := CheckFileSchema(c, opt(0)); err != nil {
		t.Fatalf("no nulls: %v", err)
	}
	if _, err := CheckFileSchema(c, opt(3)); reasonOf(err) != ReasonRequiredFieldNulls {
		t.Fatalf("nulls, no deletion vector: %v", err)
	}
	c.DeletedRows = 2
	if _, err := CheckFileSchema(c, opt(3)); reasonOf(err) != ReasonRequiredFieldNulls {
		t.Fatalf("more nulls than deleted rows: %v", err)
	}
	prove, err := CheckFileSchema(c, opt(2))
	if err != nil || len(prove) != 1 || prove[0].FieldID != 1 || prove[0].Nulls != 2 {
		t.Fatalf("nulls the deletion vector may cover: %v %v", prove, err)
	}
	if _, err := CheckFileSchema(c, []FileNode{leaf(1, "DOUBLE", Logical{}, false, 2)}); reasonOf(err) != ReasonColumnFileSchema {
		t.Fatalf("wrong type with nulls to prove: %v", err)
	}
	if _, err := CheckFileSchema(c, nil); reasonOf(err) != ReasonColumnFileSchema {
		t.Fatalf("listed field absent: %v", err)
	}
	// Fields the file holds but does not list are not the column file's.
	c.Fields = []int{2}
	if _, err := CheckFileSchema(c, []FileNode{leaf(2, "DOUBLE", Logical{}, false, 0), leaf(1, "INT64", Logical{}, false, 9)}); err != nil {
		t.Fatalf("unlisted column: %v", err)
	}
	for _, tc := range []struct {
		at   int64
		why  string
		want string
	}{{-1, "", ""}, {4, "", ReasonRequiredFieldNulls}, {-1, "cannot read", ReasonRequiredFieldNulls}} {
		if got := reasonOf(CheckNullsDeleted(c, 1, tc.at, tc.why)); got != tc.want {
			t.Errorf("null at %d (%q): %q, want %q", tc.at, tc.why, got, tc.want)
		}
	}
}

func TestCheckFileSchemaEqualityDeletes(t *testing.T) {
	sc := nestedSchema()
	c := FileCheck{Use: UseEqualityDelete, Kind: "Delete file", Name: "data/eq.parquet", Schema: sc, Fields: []int{1, 9}}
	id := leaf(1, "INT64", Logical{}, true, 0)
	pt := FileNode{Name: "pt", FieldID: 8, Kind: NodeStruct, Children: []FileNode{leaf(9, "DOUBLE", Logical{}, true, 0)}}
	if _, err := CheckFileSchema(c, []FileNode{id, pt}); err != nil {
		t.Fatalf("equality fields present: %v", err)
	}
	if _, err := CheckFileSchema(c, []FileNode{id}); reasonOf(err) != ReasonRequiredFieldMissing {
		t.Fatalf("nested equality field absent: %v", err)
	}
	if _, err := CheckFileSchema(c, []FileNode{leaf(1, "BYTE_ARRAY", Logical{}, true, 0), pt}); reasonOf(err) != ReasonFileTypeMismatch {
		t.Fatalf("equality field of the wrong type: %v", err)
	}
}

func TestCheckUniqueFiles(t *testing.T) {
	if err := CheckUniqueFiles("Data file", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if got := reasonOf(CheckUniqueFiles("Data file", []string{"a", "b", "a"})); got != ReasonDuplicateFile {
		t.Fatalf("reason %q", got)
	}
	if got := reasonOf(LiveDuplicate("Data file", "a", "data file")); got != ReasonDuplicateFile {
		t.Fatalf("reason %q", got)
	}
}
