package metricsreport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
)

// TestMatchTable: a report names the path's table with any prefix (or
// none), the last part compared exactly, and a snapshot the table holds;
// anything else is 400 naming the field.
func TestMatchTable(t *testing.T) {
	snaps := map[int64]bool{7523141588432391877: true, 42: true}
	has := func(id int64) bool { return snaps[id] }
	for _, tc := range []struct {
		table string
		snap  int64
		want  string
	}{
		{"lakehold.sales.orders", 7523141588432391877, ""},
		{"sales.orders", 42, ""},
		{"orders", 42, ""},
		{"a.b.c.orders", 42, ""},
		{"sales.Orders", 42, "field table-name"},
		{"sales.orders2", 42, "field table-name"},
		{"salesorders", 42, "field table-name"},
		{"sales.orders.snapshots", 42, "field table-name"},
		{"", 42, "field table-name"},
		{"sales.orders", 43, "field snapshot-id 43"},
		{"sales.orders", -1, "field snapshot-id -1"},
	} {
		err := MatchTable(&Report{TableName: tc.table, SnapshotID: tc.snap}, "orders", has)
		if tc.want == "" {
			require.NoError(t, err, "%+v", tc)
			continue
		}
		require.Equal(t, fault.BadRequest, fault.KindOf(err), "%+v", tc)
		require.Contains(t, err.Error(), tc.want)
	}
	// A table whose own name has a dot: the whole name must end the field.
	require.NoError(t, MatchTable(&Report{TableName: "lake.ns.a.b", SnapshotID: 42}, "a.b", has))
	require.Error(t, MatchTable(&Report{TableName: "lake.ns.b", SnapshotID: 42}, "a.b", has))
}
