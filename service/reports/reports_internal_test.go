package reports

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
)

// TestCheckQuery: the route's bounds, each refused with 400 naming the
// parameter; the zero query (every report, the default page) is taken.
func TestCheckQuery(t *testing.T) {
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{}, ""},
		{Query{Type: "scan-report", SinceMillis: 1, PageSize: MaxPageSize}, ""},
		{Query{Type: "commit-report", PageSize: 1}, ""},
		{Query{Type: "Scan-Report"}, "Invalid type"},
		{Query{SinceMillis: -1}, "Invalid since-ms"},
		{Query{PageSize: -1}, "Invalid page-size"},
		{Query{PageSize: MaxPageSize + 1}, "Invalid page-size"},
	} {
		err := checkQuery(tc.q)
		if tc.want == "" {
			require.NoError(t, err, "%+v", tc.q)
			continue
		}
		require.Equal(t, fault.BadRequest, fault.KindOf(err), "%+v", tc.q)
		require.Contains(t, err.Error(), tc.want)
	}
}
