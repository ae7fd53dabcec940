package parquetstats

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/validation"
)

// writeMem writes one record of fields (filled by fill) as Parquet in
// memory with the writer properties props.
func writeMem(t *testing.T, fields []arrow.Field, props []parquet.WriterProperty, fill func(b *array.RecordBuilder)) *bytes.Reader {
	t.Helper()
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

// bytesOf is all of r, r left at its start.
func bytesOf(t *testing.T, r *bytes.Reader) []byte {
	t.Helper()
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func idMD(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(id)})
}

// renderTree prints one line per node, depth first:
// "path id kind non-null physical logical nulls".
func renderTree(nodes []validation.FileNode) []string {
	var out []string
	var walk func(ns []validation.FileNode)
	walk = func(ns []validation.FileNode) {
		for _, n := range ns {
			kind := [...]string{"leaf", "struct", "list", "map"}[n.Kind]
			line := fmt.Sprintf("%s id=%d %s", n.Name, n.FieldID, kind)
			if n.NonNull {
				line += " non-null"
			}
			if n.Kind == validation.NodePrimitive {
				line += " " + n.Physical
				if n.Physical == "FIXED_LEN_BYTE_ARRAY" {
					line += fmt.Sprintf("(%d)", n.TypeLength)
				}
				if l := n.Logical; l.Type != "" {
					line += " " + l.Type
					switch l.Type {
					case "TIME", "TIMESTAMP":
						line += fmt.Sprintf("(%s,utc=%t,converted=%t)", l.Unit, l.UTC, l.FromConverted)
					case "DECIMAL":
						line += fmt.Sprintf("(%d,%d)", l.Precision, l.Scale)
					case "INT":
						line += fmt.Sprintf("(%d,signed=%t)", l.BitWidth, l.Signed)
					}
				}
				if n.NullsKnown {
					line += fmt.Sprintf(" nulls=%d", n.Nulls)
				} else {
					line += " nulls=?"
				}
			}
			out = append(out, line)
			walk(n.Children)
		}
	}
	walk(nodes)
	return out
}

// TestTree: the schema tree a footer gives validation, for files arrow-go
// writes: shapes (struct, list, map collapsed to their element, key and
// value), field ids written or name-mapped (-1 without), REQUIRED vs
// OPTIONAL, physical and logical types, and null counts summed over row
// groups (a null ancestor and an empty list count as a leaf's nulls),
// unknown when a chunk has no statistics.
func TestTree(t *testing.T) {
	nullable := func(name string, typ arrow.DataType, id int) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: true, Metadata: idMD(id)}
	}
	required := func(name string, typ arrow.DataType, id int) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Metadata: idMD(id)}
	}
	// Two columns: a required long, an optional string null at rows 0, 3, 4.
	twoCols := []arrow.Field{required("id", arrow.PrimitiveTypes.Int64, 1), nullable("s", arrow.BinaryTypes.String, 2)}
	fillTwo := func(b *array.RecordBuilder) {
		for i := 0; i < 5; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if i == 0 || i >= 3 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(strings.Repeat("v", i))
			}
		}
	}
	for _, tc := range []struct {
		name    string
		fields  []arrow.Field
		props   []parquet.WriterProperty
		mapping string // a name mapping (JSON), "" for none
		fill    func(b *array.RecordBuilder)
		groups  int // row groups the file must have (0: any)
		want    []string
	}{
		{
			name: "primitive types",
			fields: []arrow.Field{
				required("id", arrow.PrimitiveTypes.Int64, 1),
				nullable("dec", &arrow.Decimal128Type{Precision: 10, Scale: 2}, 2),
				nullable("tstz", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, 3),
				nullable("tsns", &arrow.TimestampType{Unit: arrow.Nanosecond}, 4),
				nullable("t", arrow.FixedWidthTypes.Time64us, 5),
				nullable("d", arrow.FixedWidthTypes.Date32, 6),
				nullable("i8", arrow.PrimitiveTypes.Int8, 7),
				nullable("fx", &arrow.FixedSizeBinaryType{ByteWidth: 16}, 8),
				{Name: "noid", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
			},
			fill: func(b *array.RecordBuilder) {
				b.Field(0).(*array.Int64Builder).Append(1)
				b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(5))
				for i := 2; i < 9; i++ {
					b.Field(i).AppendNull()
				}
			},
			want: []string{
				"id id=1 leaf non-null INT64 INT(64,signed=true) nulls=0",
				"dec id=2 leaf FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,2) nulls=0",
				"tstz id=3 leaf INT64 TIMESTAMP(MICROS,utc=true,converted=false) nulls=1",
				"tsns id=4 leaf INT64 TIMESTAMP(NANOS,utc=false,converted=false) nulls=1",
				"t id=5 leaf INT64 TIME(MICROS,utc=false,converted=false) nulls=1",
				"d id=6 leaf INT32 DATE nulls=1",
				"i8 id=7 leaf INT32 INT(8,signed=true) nulls=1",
				"fx id=8 leaf FIXED_LEN_BYTE_ARRAY(16) nulls=1",
				"noid id=-1 leaf FLOAT nulls=1",
			},
		},
		{
			name: "nested",
			fields: []arrow.Field{
				nullable("pt", arrow.StructOf(required("x", arrow.PrimitiveTypes.Float64, 9)), 8),
				nullable("tags", arrow.ListOfField(required("element", arrow.BinaryTypes.String, 4)), 3),
				nullable("props", arrow.MapOfWithMetadata(arrow.BinaryTypes.String, idMD(6), arrow.PrimitiveTypes.Int32, idMD(7)), 5),
			},
			// Row 0: a null struct, an empty list, a null map; row 1 all set.
			fill: func(b *array.RecordBuilder) {
				sb := b.Field(0).(*array.StructBuilder)
				sb.AppendNull()
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Float64Builder).Append(1)
				lb := b.Field(1).(*array.ListBuilder)
				lb.AppendEmptyValue()
				lb.Append(true)
				lb.ValueBuilder().(*array.StringBuilder).Append("a")
				mb := b.Field(2).(*array.MapBuilder)
				mb.AppendNull()
				mb.Append(true)
				mb.KeyBuilder().(*array.StringBuilder).Append("k")
				mb.ItemBuilder().(*array.Int32Builder).Append(1)
			},
			want: []string{
				"pt id=8 struct",
				"pt.x id=9 leaf non-null DOUBLE nulls=1",
				"tags id=3 list",
				"tags.element id=4 leaf non-null BYTE_ARRAY STRING nulls=1",
				"props id=5 map",
				"props.key id=6 leaf non-null BYTE_ARRAY STRING nulls=1",
				"props.value id=7 leaf INT32 INT(32,signed=true) nulls=1",
			},
		},
		{
			name: "name-mapped columns without ids",
			fields: []arrow.Field{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64},
				{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
				{Name: "unmapped", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			},
			mapping: `[{"field-id":1,"names":["id"]},{"field-id":2,"names":["st"],"fields":[{"field-id":3,"names":["y"]}]}]`,
			fill: func(b *array.RecordBuilder) {
				b.Field(0).(*array.Int64Builder).Append(1)
				sb := b.Field(1).(*array.StructBuilder)
				sb.Append(true)
				sb.FieldBuilder(0).AppendNull()
				b.Field(2).(*array.Int32Builder).Append(1)
			},
			want: []string{
				"id id=1 leaf non-null INT64 INT(64,signed=true) nulls=0",
				"st id=2 struct",
				"st.y id=3 leaf BYTE_ARRAY STRING nulls=1",
				"unmapped id=-1 leaf INT32 INT(32,signed=true) nulls=0",
			},
		},
		{
			name:   "null counts summed over row groups",
			fields: twoCols, fill: fillTwo,
			props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(2)}, groups: 3,
			want: []string{"id id=1 leaf non-null INT64 INT(64,signed=true) nulls=0", "s id=2 leaf BYTE_ARRAY STRING nulls=3"},
		},
		{
			name:   "no statistics",
			fields: twoCols, fill: fillTwo,
			props: []parquet.WriterProperty{parquet.WithStats(false)},
			want:  []string{"id id=1 leaf non-null INT64 INT(64,signed=true) nulls=?", "s id=2 leaf BYTE_ARRAY STRING nulls=?"},
		},
		{
			name:   "statistics for one column only",
			fields: twoCols, fill: fillTwo,
			props: []parquet.WriterProperty{parquet.WithStats(true), parquet.WithStatsFor("s", false)},
			want:  []string{"id id=1 leaf non-null INT64 INT(64,signed=true) nulls=0", "s id=2 leaf BYTE_ARRAY STRING nulls=?"},
		},
		{
			// parquet-mr before 1.8 wrote wrong min/max for strings
			// (PARQUET-251), so readers drop its binary statistics; the
			// null count was right and still counts.
			name:   "old writer's string statistics",
			fields: twoCols, fill: fillTwo,
			props: []parquet.WriterProperty{parquet.WithCreatedBy("parquet-mr version 1.6.0 (build abcd)")},
			want:  []string{"id id=1 leaf non-null INT64 INT(64,signed=true) nulls=0", "s id=2 leaf BYTE_ARRAY STRING nulls=3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := writeMem(t, tc.fields, tc.props, tc.fill)
			if tc.groups > 0 {
				pf, err := file.NewParquetReader(bytes.NewReader(bytesOf(t, r)))
				if err != nil {
					t.Fatal(err)
				}
				if pf.NumRowGroups() != tc.groups {
					t.Fatalf("%d row groups, want %d", pf.NumRowGroups(), tc.groups)
				}
			}
			var nm iceberg.NameMapping
			if tc.mapping != "" {
				var err error
				if nm, err = ParseNameMapping(tc.mapping); err != nil {
					t.Fatal(err)
				}
			}
			fi, err := ReadMapped(r, r.Size(), nil, nm)
			if err != nil {
				t.Fatal(err)
			}
			got := renderTree(fi.Tree)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
