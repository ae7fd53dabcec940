package scanplan

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

func testSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 4, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "loc", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "lat", Type: iceberg.PrimitiveTypes.Float64},
		}}},
	)
}

func p64(v int64) *int64 { return &v }

func bounds(lo, hi any) *v4manifest.FieldStats {
	return &v4manifest.FieldStats{LowerBound: lo, UpperBound: hi, ValueCount: p64(10), NullValueCount: p64(0)}
}

func TestMightMatch(t *testing.T) {
	sc := testSchema()
	allNull := &v4manifest.FieldStats{ValueCount: p64(10), NullValueCount: p64(10)}
	cases := []struct {
		name   string
		filter string
		fields map[int]*v4manifest.FieldStats
		usable func(int) bool
		rows   int64
		want   bool
	}{
		{"no filter", ``, nil, nil, 10, true},
		{"no rows", ``, nil, nil, 0, false},
		{"gt above upper", `{"type":"gt","term":"id","value":10}`, map[int]*v4manifest.FieldStats{1: bounds(int64(0), int64(5))}, nil, 10, false},
		{"gt within", `{"type":"gt","term":"id","value":10}`, map[int]*v4manifest.FieldStats{1: bounds(int64(0), int64(20))}, nil, 10, true},
		{"gt at upper", `{"type":"gt","term":"id","value":5}`, map[int]*v4manifest.FieldStats{1: bounds(int64(0), int64(5))}, nil, 10, false},
		{"gt-eq at upper", `{"type":"gt-eq","term":"id","value":5}`, map[int]*v4manifest.FieldStats{1: bounds(int64(0), int64(5))}, nil, 10, true},
		{"lt below lower", `{"type":"lt","term":"id","value":3}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, false},
		{"lt-eq at lower", `{"type":"lt-eq","term":"id","value":3}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, true},
		{"eq outside", `{"type":"eq","term":"id","value":9}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, false},
		{"eq inside", `{"type":"eq","term":"id","value":4}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, true},
		{"no stats keep", `{"type":"eq","term":"id","value":9}`, nil, nil, 10, true},
		{"untrusted stats keep", `{"type":"eq","term":"id","value":9}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, func(int) bool { return false }, 10, true},
		{"not rewritten", `{"type":"not","child":{"type":"lt","term":"id","value":5}}`, map[int]*v4manifest.FieldStats{1: bounds(int64(0), int64(3))}, nil, 10, false},
		{"and one side false", `{"type":"and","left":{"type":"eq","term":"id","value":4},"right":{"type":"eq","term":"region","value":"zz"}}`,
			map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5)), 2: bounds("a", "m")}, nil, 10, false},
		{"or one side true", `{"type":"or","left":{"type":"eq","term":"id","value":40},"right":{"type":"eq","term":"region","value":"c"}}`,
			map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5)), 2: bounds("a", "m")}, nil, 10, true},
		{"in none inside", `{"type":"in","term":"id","values":[1,9]}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, false},
		{"in one inside", `{"type":"in","term":"id","values":[1,4]}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, true},
		{"not-in keeps", `{"type":"not-in","term":"id","values":[3,4,5]}`, map[int]*v4manifest.FieldStats{1: bounds(int64(3), int64(5))}, nil, 10, true},
		{"is-null none", `{"type":"is-null","term":"region"}`, map[int]*v4manifest.FieldStats{2: bounds("a", "b")}, nil, 10, false},
		{"is-null unknown count", `{"type":"is-null","term":"region"}`, map[int]*v4manifest.FieldStats{2: {LowerBound: "a"}}, nil, 10, true},
		{"not-null all null", `{"type":"not-null","term":"region"}`, map[int]*v4manifest.FieldStats{2: allNull}, nil, 10, false},
		{"eq all null", `{"type":"eq","term":"region","value":"a"}`, map[int]*v4manifest.FieldStats{2: allNull}, nil, 10, false},
		{"starts-with above", `{"type":"starts-with","term":"region","value":"ab"}`, map[int]*v4manifest.FieldStats{2: bounds("b", "c")}, nil, 10, false},
		{"starts-with below", `{"type":"starts-with","term":"region","value":"zz"}`, map[int]*v4manifest.FieldStats{2: bounds("b", "c")}, nil, 10, false},
		{"starts-with inside", `{"type":"starts-with","term":"region","value":"bq"}`, map[int]*v4manifest.FieldStats{2: bounds("ba", "c")}, nil, 10, true},
		{"date bounds", `{"type":"lt","term":"d","value":"2024-01-01"}`, map[int]*v4manifest.FieldStats{3: bounds(iceberg.Date(19800), iceberg.Date(19900))}, nil, 10, false},
		{"stale type keeps", `{"type":"eq","term":"id","value":9}`, map[int]*v4manifest.FieldStats{1: bounds(int32(3), int32(5))}, nil, 10, true},
		{"nan bound keeps", `{"type":"gt","term":"score","value":1.5}`, map[int]*v4manifest.FieldStats{4: bounds(0.0, nan())}, nil, 10, true},
		{"nested field", `{"type":"gt","term":"loc.lat","value":1.5}`, map[int]*v4manifest.FieldStats{6: bounds(0.0, 1.0)}, nil, 10, false},
		{"false", `false`, nil, nil, 10, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Bind(json.RawMessage(c.filter), sc, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.MightMatch(Stats{RecordCount: c.rows, Fields: c.fields, Usable: c.usable}); got != c.want {
				t.Fatalf("MightMatch = %v, want %v (expr %s)", got, c.want, f.Expr())
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestBindErrors(t *testing.T) {
	sc := testSchema()
	for _, raw := range []string{`{`, `{"type":"eq","term":"nope","value":1}`, `{"type":"eq","term":"id","value":"abc"}`, `{"type":"bogus"}`, `42`} {
		_, err := Bind(json.RawMessage(raw), sc, true)
		if !errors.Is(err, ErrFilter) {
			t.Errorf("Bind(%s) = %v, want ErrFilter", raw, err)
		}
	}
	if _, err := Bind(json.RawMessage(`{"type":"eq","term":"ID","value":1}`), sc, true); err == nil {
		t.Error("case-sensitive bind accepted ID")
	}
	if _, err := Bind(json.RawMessage(`{"type":"eq","term":"ID","value":1}`), sc, false); err != nil {
		t.Errorf("case-insensitive bind: %v", err)
	}
}

func TestProjectAndMatchPartition(t *testing.T) {
	sc := testSchema()
	spec := iceberg.NewPartitionSpecID(1,
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "d_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}},
	)
	cases := []struct {
		name   string
		filter string
		part   map[int]any
		want   bool
	}{
		{"identity match", `{"type":"eq","term":"region","value":"eu"}`, map[int]any{1000: "eu"}, true},
		{"identity miss", `{"type":"eq","term":"region","value":"eu"}`, map[int]any{1000: "us"}, false},
		{"identity null", `{"type":"eq","term":"region","value":"eu"}`, map[int]any{1000: nil}, false},
		{"is-null on null", `{"type":"is-null","term":"region"}`, map[int]any{1000: nil}, true},
		{"day match", `{"type":"eq","term":"d","value":"2024-01-02"}`, map[int]any{1001: iceberg.Date(19724)}, true},
		{"day miss", `{"type":"eq","term":"d","value":"2024-01-02"}`, map[int]any{1001: iceberg.Date(19725)}, false},
		{"day range", `{"type":"gt-eq","term":"d","value":"2024-01-02"}`, map[int]any{1001: iceberg.Date(19723)}, false},
		{"stats-only column keeps", `{"type":"eq","term":"score","value":1.0}`, map[int]any{1000: "us"}, true},
		{"or across", `{"type":"or","left":{"type":"eq","term":"region","value":"eu"},"right":{"type":"eq","term":"score","value":1.0}}`, map[int]any{1000: "us"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Bind(json.RawMessage(c.filter), sc, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Project(spec, sc).MatchPartition(c.part); got != c.want {
				t.Fatalf("MatchPartition = %v, want %v (projected %s)", got, c.want, f.Project(spec, sc).Expr())
			}
		})
	}
	// A bucket projection keeps the bucket of the value and only it.
	f, _ := Bind(json.RawMessage(`{"type":"eq","term":"id","value":7}`), sc, true)
	pf := f.Project(spec, sc)
	kept := 0
	for b := int32(0); b < 4; b++ {
		if pf.MatchPartition(map[int]any{1002: b}) {
			kept++
		}
	}
	if kept != 1 {
		t.Fatalf("bucket projection kept %d of 4 buckets, want 1 (%s)", kept, pf.Expr())
	}
}

func TestTopLevelIDs(t *testing.T) {
	sc := testSchema()
	got, err := TopLevelIDs(sc, []string{"loc.lat", "ID"}, false, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got[5] || !got[1] || !got[3] {
		t.Fatalf("TopLevelIDs = %v, want {1,3,5}", got)
	}
	if _, err := TopLevelIDs(sc, []string{"nope"}, true, nil); !errors.Is(err, ErrSelect) {
		t.Fatalf("unknown select: %v", err)
	}
	if got, _ := TopLevelIDs(sc, nil, true, []int{1}); got != nil {
		t.Fatalf("empty select = %v, want nil (all)", got)
	}
}
