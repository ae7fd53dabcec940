package v4commits

import (
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
)

// FormatV4 is the table format version whose snapshots point at v4 root
// manifests and whose data can carry column files.
const FormatV4 = tablemeta.FormatV4

// PlanUpdates inspects a commit's updates against the current format version:
// it returns the target version and the updates to apply through the v3
// view (an upgrade to 4 is done by the view itself). A downgrade and
// snapshot-producing updates on v4 tables are 400s; so is an upgrade of a
// table with snapshots (hasSnapshots) to v4, which converts manifests and
// is committed on its own through the orchestration's upgrade commit, never here.
// Updates whose JSON the service cannot read as meta are a 400 too.
func PlanUpdates(current int, hasSnapshots bool, ups table.Updates, meta []tablemeta.UpdateInfo) (int, table.Updates, error) {
	target := current
	if len(meta) != len(ups) {
		// Both are read from the same JSON; a list one reader takes and the
		// other does not would let an update past the checks below.
		return 0, nil, fault.New(fault.BadRequest, "Cannot read the commit's updates: each must be an object with an action")
	}
	kept := make(table.Updates, 0, len(ups))
	for i, u := range ups {
		m := meta[i]
		switch {
		case m.Action == "upgrade-format-version" && m.FormatVersion == FormatV4:
			if current != FormatV4 && hasSnapshots {
				return 0, nil, fault.New(fault.BadRequest, "Cannot upgrade a table with snapshots to format version 4 inside a multi-table transaction: the upgrade converts the table's manifests and must be committed on its own")
			}
			target = FormatV4
			continue
		case m.Action == "upgrade-format-version" && current == FormatV4 && m.FormatVersion < FormatV4:
			return 0, nil, fault.New(fault.BadRequest, "Cannot downgrade format version from 4 to %d", m.FormatVersion)
		case m.Action == "upgrade-format-version" && m.FormatVersion > FormatV4:
			return 0, nil, fault.New(fault.BadRequest, "Unsupported format version: %d", m.FormatVersion)
		case target == FormatV4 && m.Action == "add-snapshot":
			return 0, nil, fault.New(fault.BadRequest, "Snapshots of format version 4 tables are committed through the files and column-files routes, not add-snapshot")
		}
		kept = append(kept, u)
	}
	return target, kept, nil
}
