package server_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"
)

// TestUpgradeV1V2WithSnapshotsInOneCommit: a v1 or v2 table with snapshots
// (iceberg-go appends, and an equality delete on v2) goes to v4 in one
// commit: row ids are assigned to its data files in order from 0, as a v3
// upgrade would, next-row-id moves past them (the conversion snapshot's
// added-rows), the rows read back through plan + stitch equal iceberg-go's
// scan, and the table takes v4 commits.
func TestUpgradeV1V2WithSnapshotsInOneCommit(t *testing.T) {
	for _, backend := range backends {
		for _, version := range []string{"1", "2"} {
			t.Run(backend+"/v"+version, func(t *testing.T) {
				b := setup(t, backend)
				ctx := context.Background()
				tbl := goTable(t, b, "db", "old", []int64{1, 2, 3}, catalog.WithProperties(iceberg.Properties{"format-version": version}))
				tbl, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 4, 5, 6, 7), 100, nil)
				require.NoError(t, err)
				if version == "2" {
					tbl = addEqualityDelete(t, tbl, 5)
				}
				want := scanRows(t, tbl)
				path := "/v1/wh/namespaces/db/tables/old"

				r := upgradeTo4(t, b, path)
				require.Equal(t, 200, r.status, "%s", r.body)
				require.Equal(t, 4, formatVersion(t, r))
				require.Contains(t, r.header.Get("Warning"), "no downgrade")
				_, snaps, nextRowID := v4Meta(t, r)
				conv := snaps[len(snaps)-1]
				require.Equal(t, fmt.Sprint(tbl.CurrentSnapshot().SnapshotID), conv.Summary["v4-conversion-of-snapshot-id"])
				require.EqualValues(t, 7, nextRowID, "every row of the 7 written got an id")
				require.EqualValues(t, 0, conv.FirstRowID)
				require.EqualValues(t, 7, conv.AddedRows)

				now := planOf(t, b, path, map[string]any{})
				require.Equal(t, want, stitchRows(t, tbl.Schema(), now), "row-for-row equal to iceberg-go's scan before the upgrade")
				type span struct{ first, count int64 }
				var spans []span
				for _, task := range now.Tasks {
					require.NotNil(t, task.DataFile.FirstRowID, "%s has row ids", task.DataFile.FilePath)
					spans = append(spans, span{*task.DataFile.FirstRowID, task.DataFile.RecordCount})
				}
				sort.Slice(spans, func(i, j int) bool { return spans[i].first < spans[j].first })
				var next int64
				for _, s := range spans {
					require.Equal(t, next, s.first, "ranges are consecutive from 0: %v", spans)
					next += s.count
				}
				require.Equal(t, nextRowID, next)

				// Still a working v4 table: remove a file.
				r = b.do(t, "POST", path+"/files", map[string]any{"remove-files": []string{now.Tasks[0].DataFile.FilePath}})
				require.Equal(t, 200, r.status, "%s", r.body)
			})
		}
	}
}
