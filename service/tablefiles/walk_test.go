package tablefiles_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service/tablefiles"
	"github.com/lakehold/catalog/v4manifest"
)

func row(loc string, status v4manifest.Status, content v4manifest.ContentType) v4manifest.TrackedFile {
	return v4manifest.TrackedFile{Location: loc, ContentType: content, Tracking: v4manifest.Tracking{Status: status}}
}

// tree is a v4 table of two snapshots: root-1 lists leaf-a; root-2 lists
// leaf-a again, leaf-b (dropped in it) and a data file carried in the root
// with a deletion vector and a column file.
func tree() map[string][]v4manifest.TrackedFile {
	direct := row("d-root", v4manifest.StatusAdded, v4manifest.ContentData)
	direct.DeletionVector = &v4manifest.DeletionVector{Location: "dv-1"}
	direct.ColumnFiles = []v4manifest.ColumnFile{{Location: "cf-1"}}
	return map[string][]v4manifest.TrackedFile{
		"root-1": {row("leaf-a", v4manifest.StatusAdded, v4manifest.ContentDataManifest)},
		"root-2": {
			row("leaf-a", v4manifest.StatusExisting, v4manifest.ContentDataManifest),
			row("leaf-b", v4manifest.StatusDeleted, v4manifest.ContentDataManifest),
			direct,
		},
		"leaf-a": {row("d-1", v4manifest.StatusAdded, v4manifest.ContentData), row("d-0", v4manifest.StatusDeleted, v4manifest.ContentData)},
		"leaf-b": {row("d-2", v4manifest.StatusAdded, v4manifest.ContentData)},
	}
}

type walkLog struct {
	visited []string
	read    []string
	levels  map[string]tablefiles.Level
}

func walker(t *testing.T, log *walkLog, files map[string][]v4manifest.TrackedFile) tablefiles.Walker {
	log.levels = map[string]tablefiles.Level{}
	return tablefiles.Walker{
		Visit: func(r tablefiles.Ref) (bool, error) {
			log.visited = append(log.visited, r.Location)
			log.levels[r.Location] = r.Level
			return true, nil
		},
		Unreadable: func(what, loc string, err error) error { return err },
		ReadV4: func(_ context.Context, loc string, inherit *v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
			log.read = append(log.read, loc)
			rows, ok := files[loc]
			if !ok {
				return nil, errors.New("no such manifest")
			}
			if (inherit == nil) != (loc == "root-1" || loc == "root-2") {
				t.Errorf("%s read with inherit %v", loc, inherit)
			}
			return rows, nil
		},
		LegacyList: func(string) bool { return false },
	}
}

func snapshots(ctx context.Context, w *tablefiles.Walker, roots ...string) error {
	for _, r := range roots {
		if err := w.Snapshot(ctx, table.Snapshot{ManifestList: r}, 4); err != nil {
			return err
		}
	}
	return nil
}

func TestWalkLiveRowsReadsEachManifestOnce(t *testing.T) {
	var log walkLog
	w := walker(t, &log, tree())
	require.NoError(t, snapshots(context.Background(), &w, "root-1", "root-2"))
	require.Equal(t, []string{"root-1", "leaf-a", "d-1", "root-2", "d-root", "dv-1", "cf-1"}, log.visited,
		"live rows only; leaf-a, shared by both roots, once")
	require.Equal(t, []string{"root-1", "leaf-a", "root-2"}, log.read)
	require.Equal(t, tablefiles.ManifestList, log.levels["root-2"])
	require.Equal(t, tablefiles.Manifest, log.levels["leaf-a"])
	require.Equal(t, tablefiles.Content, log.levels["cf-1"])
}

func TestWalkAllRows(t *testing.T) {
	var log walkLog
	w := walker(t, &log, tree())
	w.AllRows = true
	require.NoError(t, snapshots(context.Background(), &w, "root-2"))
	require.ElementsMatch(t, []string{"root-2", "leaf-a", "d-1", "d-0", "leaf-b", "d-2", "d-root", "dv-1", "cf-1"}, log.visited)
}

func TestWalkVisitDecidesWhatIsRead(t *testing.T) {
	var log walkLog
	w := walker(t, &log, tree())
	visit := w.Visit
	w.Visit = func(r tablefiles.Ref) (bool, error) {
		_, _ = visit(r)
		return r.Location != "leaf-a", nil // as a manifest outside the table
	}
	require.NoError(t, snapshots(context.Background(), &w, "root-1", "root-2"))
	require.Equal(t, []string{"root-1", "root-2"}, log.read, "a refused leaf is not read")
	require.Equal(t, []string{"root-1", "leaf-a", "root-2", "leaf-a", "d-root", "dv-1", "cf-1"}, log.visited,
		"a refused leaf is not marked seen")

	stop := errors.New("outside")
	w = walker(t, &log, tree())
	w.Visit = func(r tablefiles.Ref) (bool, error) {
		if r.Location == "dv-1" {
			return false, stop
		}
		return true, nil
	}
	require.ErrorIs(t, snapshots(context.Background(), &w, "root-2"), stop)
}

func TestWalkUnreadable(t *testing.T) {
	files := tree()
	delete(files, "leaf-a")
	var log walkLog
	w := walker(t, &log, files)
	var skipped []string
	w.Unreadable = func(what, loc string, err error) error {
		skipped = append(skipped, what+" "+loc)
		return nil
	}
	require.NoError(t, snapshots(context.Background(), &w, "root-2", "root-missing"))
	require.Equal(t, []string{"leaf manifest leaf-a", "root manifest root-missing"}, skipped)
	require.Contains(t, log.visited, "cf-1", "the walk goes on past a skipped leaf")

	w = walker(t, &log, files)
	require.ErrorContains(t, snapshots(context.Background(), &w, "root-2"), "no such manifest")
}
