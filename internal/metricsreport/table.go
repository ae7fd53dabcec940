package metricsreport

import (
	"strings"

	"github.com/lakehold/catalog/internal/fault"
)

// MatchTable checks that rep is about the table its path names: its
// table-name is name, or ends in "." followed by name (engines prefix the
// catalog and namespace: "lake.sales.orders", "sales.orders"; the prefix
// is not checked, the name is, case-sensitively), and its snapshot-id is
// one hasSnapshot says the table's current metadata holds. Engines
// report a scan of a snapshot they read and a commit after it landed,
// so both are in the metadata unless expired in between; an engine never
// reports a scan of a table with no snapshot, so -1 is refused too.
// Errors: 400 BadRequest naming table-name or snapshot-id.
func MatchTable(rep *Report, name string, hasSnapshot func(id int64) bool) error {
	if rep.TableName != name && !strings.HasSuffix(rep.TableName, "."+name) {
		return fault.New(fault.BadRequest, "Invalid metrics report: field table-name %q does not name table %s", clip(rep.TableName), clip(name))
	}
	if !hasSnapshot(rep.SnapshotID) {
		return fault.New(fault.BadRequest, "Invalid metrics report: field snapshot-id %d is not a snapshot of table %s", rep.SnapshotID, clip(name))
	}
	return nil
}
