package maintenance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/tablemeta"
)

// TestGCDisabled: any gc.enabled value but "true" (in any case, spaces
// trimmed) turns GC off; no value leaves it on.
func TestGCDisabled(t *testing.T) {
	for v, off := range map[string]bool{"true": false, " TRUE ": false, "True": false, "false": true, "": true, "yes": true} {
		require.Equal(t, off, GCDisabled(map[string]string{"gc.enabled": v}), "gc.enabled=%q", v)
	}
	require.False(t, GCDisabled(nil))
	require.False(t, GCDisabled(map[string]string{"other": "false"}))
}

// TestSnapshotsToExpire: a chain 1 ← 2 ← 3 ← 4 (main at 4, a tag at 1),
// one snapshot a day from ten days ago: ref heads, the newest RetainLast
// ancestors of a branch and snapshots newer than the cut-off stay.
func TestSnapshotsToExpire(t *testing.T) {
	now := time.Now()
	day := 24 * time.Hour
	var snaps []string
	for i := int64(1); i <= 4; i++ {
		parent := ""
		if i > 1 {
			parent = fmt.Sprintf(`"parent-snapshot-id":%d,`, i-1)
		}
		snaps = append(snaps, fmt.Sprintf(`{"snapshot-id":%d,%s"sequence-number":%d,"timestamp-ms":%d,"manifest-list":"file:///t/metadata/snap-%d.avro","summary":{"operation":"append"},"schema-id":0}`,
			i, parent, i, now.Add(-time.Duration(11-i)*day).UnixMilli(), i))
	}
	doc := fmt.Sprintf(`{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///t","last-sequence-number":4,
"last-updated-ms":%d,"last-column-id":1,"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"c","type":"long","required":false}]}],
"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],
"current-snapshot-id":4,"snapshots":[%s],"refs":{"main":{"snapshot-id":4,"type":"branch"},"v1":{"snapshot-id":1,"type":"tag"}}}`,
		now.UnixMilli(), strings.Join(snaps, ","))
	meta, _, err := tablemeta.Parse([]byte(doc))
	require.NoError(t, err)

	for _, c := range []struct {
		name  string
		props map[string]string
		opt   MaintainOptions
		want  []int64
	}{
		{"defaults: 5 days, keep 1", nil, MaintainOptions{}, []int64{2, 3}},
		{"cut-off before all", nil, MaintainOptions{ExpireOlderThan: now.Add(-30 * day)}, nil},
		{"retain 2", nil, MaintainOptions{ExpireOlderThan: now, RetainLast: 2}, []int64{2}},
		{"retain by property", map[string]string{PropMinSnapshotsToKeep: "3"}, MaintainOptions{ExpireOlderThan: now}, nil},
		{"age by property", map[string]string{PropMaxSnapshotAge: fmt.Sprint((8*day + day/2).Milliseconds())}, MaintainOptions{}, []int64{2}},
		{"options win over properties", map[string]string{PropMinSnapshotsToKeep: "3"}, MaintainOptions{ExpireOlderThan: now, RetainLast: 1}, []int64{2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, snapshotsToExpire(meta, c.props, c.opt, now))
		})
	}
}
