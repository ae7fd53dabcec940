package planning_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/v4manifest"
)

const (
	benchPlanFiles      = 100_000
	benchPlanPartitions = 100
)

// BenchmarkPlan plans a 100k-file v4 table (100 region partitions, files
// committed in region order so leaves cluster; ids rise with the file
// index) unfiltered, with a 1%-of-partitions filter and with a 1% id range
// on a stats-only column. It reports the leaves read per plan and the
// tasks planned. Plans are not paged here, so that the whole plan is
// measured.
func BenchmarkPlan(b *testing.B) {
	ctx := context.Background()
	fx := newV4Fixture(b, service.Options{MaxPlanTasks: 1 << 30}, "big",
		[]byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},`+
			`{"id":2,"name":"region","type":"string","required":false},{"id":3,"name":"score","type":"double","required":false}]}`),
		[]byte(`{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"region","transform":"identity"}]}`))
	zero := int64(0)
	adds := make([]service.DataFileInput, benchPlanFiles)
	per := benchPlanFiles / benchPlanPartitions
	for i := range adds {
		region := fmt.Sprintf("r%02d", i/per)
		n := int64(1000)
		adds[i] = service.DataFileInput{Location: fmt.Sprintf("data/f%06d.parquet", i), FileFormat: "parquet", RecordCount: n, FileSizeInBytes: 1 << 20,
			Partition: map[string]json.RawMessage{"region": json.RawMessage(`"` + region + `"`)},
			Stats: map[int]*v4manifest.FieldStats{
				1: {LowerBound: int64(i) * n, UpperBound: int64(i)*n + n - 1, ValueCount: &n, NullValueCount: &zero},
				2: {LowerBound: region, UpperBound: region, ValueCount: &n, NullValueCount: &zero},
			}}
	}
	_, err := fx.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: adds})
	require.NoError(b, err)
	adds = nil
	cases := []struct{ name, filter string }{
		{"unfiltered", ``},
		{"partition-1pct", `{"type":"eq","term":"region","value":"r42"}`},
		{"stats-1pct", fmt.Sprintf(`{"type":"and","left":{"type":"gt-eq","term":"id","value":%d},"right":{"type":"lt","term":"id","value":%d}}`,
			50_000*1000, 51_000*1000)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var leaves, tasks int
			for i := 0; i < b.N; i++ {
				p, err := fx.pl.NewV4Plan(ctx, fx.w, fx.id, planning.Request{Filter: json.RawMessage(c.filter), CaseSensitive: true})
				require.NoError(b, err)
				res, err := p.Plan(ctx)
				require.NoError(b, err)
				leaves, tasks = p.LeavesRead(), len(res.Tasks)
			}
			b.ReportMetric(float64(leaves), "leaves-read")
			b.ReportMetric(float64(tasks), "tasks")
		})
	}
}
