package v4commits_test

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/v4commits"
)

// TestPlanUpdates: the upgrade to 4 is dropped from the updates and sets
// the target; a downgrade, an unknown version, add-snapshot on a v4 table
// and an upgrade of a table with snapshots are 400s.
func TestPlanUpdates(t *testing.T) {
	upgrade := func(v int) (table.Update, tablemeta.UpdateInfo) {
		return table.NewUpgradeFormatVersionUpdate(v), tablemeta.UpdateInfo{Action: "upgrade-format-version", FormatVersion: v}
	}
	props := table.NewSetPropertiesUpdate(map[string]string{"k": "v"})
	propsInfo := tablemeta.UpdateInfo{Action: "set-properties"}
	addSnap := tablemeta.UpdateInfo{Action: "add-snapshot"}

	up4, up4Info := upgrade(4)
	target, kept, err := v4commits.PlanUpdates(3, false, table.Updates{up4, props}, []tablemeta.UpdateInfo{up4Info, propsInfo})
	require.NoError(t, err)
	require.Equal(t, v4commits.FormatV4, target)
	require.Equal(t, table.Updates{props}, kept)

	target, kept, err = v4commits.PlanUpdates(4, true, table.Updates{props}, []tablemeta.UpdateInfo{propsInfo})
	require.NoError(t, err)
	require.Equal(t, v4commits.FormatV4, target)
	require.Len(t, kept, 1)

	up3, up3Info := upgrade(3)
	up5, up5Info := upgrade(5)
	for name, tc := range map[string]struct {
		current      int
		hasSnapshots bool
		ups          table.Updates
		info         []tablemeta.UpdateInfo
	}{
		"downgrade":              {4, false, table.Updates{up3}, []tablemeta.UpdateInfo{up3Info}},
		"unknown version":        {3, false, table.Updates{up5}, []tablemeta.UpdateInfo{up5Info}},
		"add-snapshot on v4":     {4, false, table.Updates{props}, []tablemeta.UpdateInfo{addSnap}},
		"upgrade with snapshots": {3, true, table.Updates{up4}, []tablemeta.UpdateInfo{up4Info}},
	} {
		_, _, err := v4commits.PlanUpdates(tc.current, tc.hasSnapshots, tc.ups, tc.info)
		require.Error(t, err, name)
		require.Equal(t, fault.BadRequest, fault.KindOf(err), name)
	}
}
