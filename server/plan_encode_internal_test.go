package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/openapi/scantasks"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/v4read"
)

// TestSingleValue: partition values in the Iceberg single-value JSON that
// Java's SingleValueParser reads.
func TestSingleValue(t *testing.T) {
	ts := iceberg.Timestamp(1_700_000_000_123_456)
	cases := []struct {
		v    any
		typ  iceberg.Type
		want string
	}{
		{nil, nil, `null`},
		{true, iceberg.PrimitiveTypes.Bool, `true`},
		{int32(7), iceberg.PrimitiveTypes.Int32, `7`},
		{int64(-7), iceberg.PrimitiveTypes.Int64, `-7`},
		{1.5, iceberg.PrimitiveTypes.Float64, `1.5`},
		{"eu", iceberg.PrimitiveTypes.String, `"eu"`},
		{iceberg.Date(19724), iceberg.PrimitiveTypes.Date, `"2024-01-02"`},
		{iceberg.Time(3_723_000_001), iceberg.PrimitiveTypes.Time, `"01:02:03.000001"`},
		{ts, iceberg.PrimitiveTypes.Timestamp, `"2023-11-14T22:13:20.123456"`},
		{ts, iceberg.PrimitiveTypes.TimestampTz, `"2023-11-14T22:13:20.123456+00:00"`},
		{[]byte{0x0a, 0xff}, iceberg.PrimitiveTypes.Binary, `"0AFF"`},
		{uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7"), iceberg.PrimitiveTypes.UUID, `"f79c3e09-677c-4bbd-a479-3f349cb785e7"`},
	}
	for _, c := range cases {
		if got := string(singleValue(c.v, c.typ)); got != c.want {
			t.Errorf("singleValue(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// fullPlan sets every field a plan answer can carry: a v4 change task
// with column files and their sequence numbers, a plain v1–v3 task, a
// deletion vector and an equality delete file.
func fullPlan() service.PlanResult {
	i64 := func(v int64) *int64 { return &v }
	i32 := func(v int32) *int32 { return &v }
	str := func(v string) *string { return &v }
	part, partTypes := []any{int32(3), "eu"}, []iceberg.Type{iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.String}
	return service.PlanResult{
		Residual: json.RawMessage(`{"type":"gt","term":"a","value":1}`),
		Tasks: []service.ScanTask{{
			Location: "s3://b/t/data/a.parquet", FileFormat: "PARQUET", SpecID: 1, PartitionValues: part, PartitionTypes: partTypes,
			RecordCount: 10, FileSizeInBytes: 1234, FirstRowID: i64(100), SortOrderID: i32(2), SplitOffsets: []int64{4, 600},
			ValueCounts: map[int]int64{2: 10, 1: 9}, NullValueCounts: map[int]int64{1: 0}, NaNValueCounts: map[int]int64{3: 1},
			ColumnFiles: []v4read.ColumnFileRef{
				{Location: "s3://b/t/data/c1.parquet", FileFormat: "PARQUET", FieldIDs: []int{2, 2147483539}, FileSizeInBytes: 99},
				{Location: "s3://b/t/data/c2.parquet", FileFormat: "parquet", FieldIDs: []int{3}, FileSizeInBytes: 77}},
			ColumnFileSequenceNumbers: []int64{6, 7},
			DeleteRefs:                []int{0, 1}, DataSequenceNumber: 7, LatestColumnFileSnapshotID: i64(55), ColumnFilesChangedSince: i64(44),
		}, {
			Location: "s3://b/t/data/b.avro", FileFormat: "AVRO", RecordCount: 3, FileSizeInBytes: 10, PartitionValues: []any{},
		}},
		DeleteFiles: []service.DeleteFile{
			{Content: "position-deletes", Location: "s3://b/t/data/dv.puffin", FileFormat: "PUFFIN", SpecID: 1,
				PartitionValues: part, PartitionTypes: partTypes, RecordCount: 2, FileSizeInBytes: 80,
				ReferencedDataFile: str("s3://b/t/data/a.parquet"), ContentOffset: i64(4), ContentSize: i64(76)},
			{Content: "equality-deletes", Location: "s3://b/t/data/eq.parquet", FileFormat: "parquet", RecordCount: 1,
				FileSizeInBytes: 300, EqualityIDs: []int{1}, PartitionValues: []any{}},
		},
	}
}

// scanTaskSchemas loads openapi/scantasks/scantasks.json.
func scanTaskSchemas(t *testing.T) openapi3.Schemas {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../openapi/scantasks/scantasks.json")
	require.NoError(t, err)
	return doc.Components.Schemas
}

// TestEncodePlanSchema: every encoded task and delete file validates
// against its schema in openapi/scantasks/scantasks.json, decodes into the
// generated type with no key left over, and together they use every
// property the schemas declare (so a field added to the schema but not
// encoded, or encoded but not declared, fails here). The values are
// checked where the encoder does more than copy: lower-case formats,
// sorted counts, a column file's sequence number, the residual, and an
// empty partition as [] rather than null.
func TestEncodePlanSchema(t *testing.T) {
	schemas := scanTaskSchemas(t)
	tasks, deletes := encodePlan(fullPlan())
	seen := map[string]map[string]bool{}
	check := func(schema string, v, into any) {
		t.Helper()
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var generic any
		require.NoError(t, json.Unmarshal(b, &generic))
		require.NoError(t, schemas[schema].Value.VisitJSON(generic), "%s: %s", schema, b)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(into), "%s: %s", schema, b)
		markKeys(seen, schemas, schema, generic)
	}
	for _, task := range tasks {
		check("FileScanTask", task, &scantasks.FileScanTask{})
	}
	for _, d := range deletes {
		check("PlanDeleteFile", d, &scantasks.PlanDeleteFile{})
	}
	for name, ref := range schemas {
		for prop := range ref.Value.Properties {
			require.True(t, seen[name][prop], "%s.%s is declared but no encoded plan field carried it", name, prop)
		}
		for key := range seen[name] {
			require.Contains(t, ref.Value.Properties, key, "%s: the server sends %s, which the schema does not declare", name, key)
		}
	}

	df := tasks[0].DataFile
	require.Equal(t, "parquet", df.FileFormat)
	require.Equal(t, "puffin", deletes[0].FileFormat)
	require.Equal(t, &scantasks.CountMap{Keys: []int{1, 2}, Values: []int64{9, 10}}, df.ValueCounts)
	require.Equal(t, "parquet", df.ColumnFiles[0].FileFormat)
	require.Equal(t, int64(7), *df.ColumnFiles[1].SequenceNumber)
	require.JSONEq(t, `{"type":"gt","term":"a","value":1}`, string(tasks[1].ResidualFilter))
	b, err := json.Marshal(tasks[1])
	require.NoError(t, err)
	require.Contains(t, string(b), `"partition":[]`)
	require.NotContains(t, string(b), "column-files", "a task without column files leaves the key out")
}

// markKeys records, per schema, the properties v carries, following the
// schemas' object references (arrays of objects included) but not into
// free JSON (RawJSON: a residual filter, a partition value).
func markKeys(seen map[string]map[string]bool, schemas openapi3.Schemas, name string, v any) {
	obj, ok := v.(map[string]any)
	if !ok || len(schemas[name].Value.Properties) == 0 {
		return
	}
	if seen[name] == nil {
		seen[name] = map[string]bool{}
	}
	for k, val := range obj {
		seen[name][k] = true
		prop := schemas[name].Value.Properties[k]
		if prop == nil {
			continue
		}
		ref, items := prop.Ref, []any{val}
		if prop.Value.Items != nil {
			ref = prop.Value.Items.Ref
			items, _ = val.([]any)
		}
		if target, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
			for _, it := range items {
				markKeys(seen, schemas, target, it)
			}
		}
	}
}
