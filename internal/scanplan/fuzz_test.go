package scanplan

import (
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

// FuzzFilter feeds arbitrary filter JSON through binding, stats evaluation
// and partition projection: nothing may panic, and a filter that binds
// must keep a file with no stats (pruning is only ever on evidence).
func FuzzFilter(f *testing.F) {
	for _, s := range []string{`true`, `{"type":"eq","term":"id","value":1}`, `{"type":"not","child":{"type":"in","term":"region","values":["a","b"]}}`,
		`{"type":"and","left":{"type":"lt","term":"d","value":"2024-01-01"},"right":{"type":"is-null","term":"loc.lat"}}`,
		`{"type":"starts-with","term":"region","value":"x"}`, `{"type":"eq","term":{"type":"transform","transform":"bucket[4]","term":"id"},"value":1}`} {
		f.Add([]byte(s), int64(3), int64(9))
	}
	sc := testSchema()
	spec := iceberg.NewPartitionSpecID(1,
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "d_month", Transform: iceberg.MonthTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "id_trunc", Transform: iceberg.TruncateTransform{Width: 10}})
	f.Fuzz(func(t *testing.T, raw []byte, lo, hi int64) {
		flt, err := Bind(json.RawMessage(raw), sc, lo%2 == 0)
		if err != nil {
			return
		}
		if !flt.MightMatch(Stats{RecordCount: 5}) && !isFalse(flt) {
			t.Fatalf("filter %s pruned a file with no stats", flt.Expr())
		}
		flt.MightMatch(Stats{RecordCount: 5, Fields: map[int]*v4manifest.FieldStats{
			1: bounds(lo, hi), 2: bounds("a", "q"), 3: bounds(iceberg.Date(lo%40000), iceberg.Date(hi%40000)), 6: bounds(float64(lo), float64(hi)),
		}})
		flt.Project(spec, sc).MatchPartition(map[int]any{1000: "e", 1001: int32(lo % 1000), 1002: hi})
	})
}

// isFalse reports whether the bound filter is a constant false after
// binding (binding may fold, e.g., a comparison that can never hold).
func isFalse(f *Filter) bool {
	ok, _ := iceberg.VisitExpr(f.expr, &metricsEval{st: Stats{RecordCount: 1, Usable: func(int) bool { return false }}})
	return !ok
}
