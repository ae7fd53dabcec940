package planning

import (
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/internal/scanplan"
	"github.com/lakehold/catalog/v4manifest"
)

// TestStatsPrecedence: on a row whose column file carries struct field 4,
// the stats of 4's nested field 5 are the base file's (stale) and are not
// used; the stats of carried and uncarried top-level fields are.
func TestStatsPrecedence(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "info", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "a", Type: iceberg.PrimitiveTypes.Float64},
		}}},
	)
	p := &scanPlanV4{top: scanplan.TopLevel(sc)}
	row := &v4manifest.TrackedFile{ColumnFiles: []v4manifest.ColumnFile{{FieldIDs: []int32{3, 4}}}}
	ok := p.usable(row)
	for id, want := range map[int]bool{1: true, 3: true, 4: true, 5: false} {
		if got := ok(id); got != want {
			t.Errorf("usable(%d) = %v, want %v", id, got, want)
		}
	}
	if p.usable(&v4manifest.TrackedFile{}) != nil {
		t.Error("a row without column files restricts nothing")
	}
	// The stale nested stats say a > 100 cannot match; they must not prune.
	f, err := scanplan.Bind([]byte(`{"type":"gt","term":"info.a","value":100}`), sc, true)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 1.0
	row.ContentStats = map[int]*v4manifest.FieldStats{5: {LowerBound: lo, UpperBound: hi}}
	row.RecordCount = 10
	p.filter = f
	if !p.rowMightMatch(row) {
		t.Error("a file was pruned by stale nested stats")
	}
	ten := int64(10)
	vc, _, _ := p.counts(&v4manifest.TrackedFile{ColumnFiles: row.ColumnFiles, ContentStats: map[int]*v4manifest.FieldStats{
		5: {ValueCount: &ten}, 1: {ValueCount: &ten}}})
	if _, stale := vc[5]; stale || vc[1] != 10 {
		t.Errorf("counts = %v, want field 1 only", vc)
	}
}
