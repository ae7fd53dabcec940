package server_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// TestMaintainV2Table: on a v2 table written by iceberg-go (append,
// append, overwrite), the maintenance route's dry run names the replaced
// data files, manifests and manifest lists; the real run deletes exactly
// those, and the table still scans all its rows.
func TestMaintainV2Table(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			ctx := context.Background()
			tbl := goTable(t, b, "db", "ev", []int64{1, 2, 3}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
			tbl, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 4, 5), 100, nil)
			require.NoError(t, err)
			old := mustTasks(t, tbl)
			tbl, err = tbl.OverwriteTable(ctx, arrowRows(t, tbl.Schema(), 7, 8, 9, 10), 100, nil)
			require.NoError(t, err)
			current := mustTasks(t, tbl)
			require.Len(t, tbl.Metadata().Snapshots(), 3)

			path := "/management/v1/warehouses/wh/namespaces/db/tables/ev/maintain"
			later := "2999-01-01T00:00:00Z"
			dry := b.do(t, "POST", path, map[string]any{"expire-older-than": later, "retain-last": 1, "dry-run": true})
			require.Equal(t, 200, dry.status, "%s", dry.body)
			var rep struct {
				Expired []int64  `json:"expired-snapshot-ids"`
				Deleted []string `json:"deleted-files"`
				DryRun  bool     `json:"dry-run"`
			}
			require.NoError(t, json.Unmarshal(dry.body, &rep))
			require.True(t, rep.DryRun)
			require.Len(t, rep.Expired, 2)
			for _, f := range old {
				require.Contains(t, rep.Deleted, strings.TrimPrefix(f, tbl.Location()+"/"))
				require.FileExists(t, strings.TrimPrefix(f, "file://"), "a dry run deletes nothing")
			}
			for _, s := range tbl.Metadata().Snapshots()[:2] {
				require.Contains(t, rep.Deleted, strings.TrimPrefix(s.ManifestList, tbl.Location()+"/"))
			}
			require.NotContains(t, dry.body, `"`+tbl.Location(), "files are named relative to the table")

			r := b.do(t, "POST", path, map[string]any{"expire-older-than": later, "retain-last": 1})
			require.Equal(t, 200, r.status, "%s", r.body)
			var done struct {
				Deleted []string `json:"deleted-files"`
			}
			require.NoError(t, json.Unmarshal(r.body, &done))
			require.ElementsMatch(t, rep.Deleted, done.Deleted)
			for _, f := range old {
				_, err := os.Stat(strings.TrimPrefix(f, "file://"))
				require.True(t, os.IsNotExist(err), "%s survived", f)
			}
			loaded, err := restCatalog(t, b).LoadTable(ctx, table.Identifier{"db", "ev"})
			require.NoError(t, err)
			require.Len(t, loaded.Metadata().Snapshots(), 1)
			require.ElementsMatch(t, current, mustTasks(t, loaded))
			rows, err := loaded.Scan().ToArrowTable(ctx)
			require.NoError(t, err)
			defer rows.Release()
			require.EqualValues(t, 4, rows.NumRows())

			bad := b.do(t, "POST", path, map[string]any{"retain-last": 0})
			require.Equal(t, 400, bad.status, "%s", bad.body)
			missing := b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/db/tables/nope/maintain", map[string]any{})
			require.Equal(t, 404, missing.status, "%s", missing.body)
		})
	}
}
