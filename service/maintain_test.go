package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// maintEnv is a v4 table with history: bases a and b, two column updates
// of the same field of a (the first retired by the second), and b removed.
type maintEnv struct {
	ctx  context.Context
	st   store.Store
	svc  *service.Service
	id   service.Ident
	dir  string // the table directory
	uuid string
	// dbPath is the SQLite file, for a second replica on the same catalog.
	dbPath string
}

func newMaintEnv(t *testing.T) *maintEnv { return newMaintEnvWith(t, nil, service.Options{}) }

// newMaintEnvWith is newMaintEnv with extra table properties, a store
// opened with opts and a service with so (its Logger is set here).
func newMaintEnvWith(t *testing.T, props map[string]string, so service.Options, opts ...sqlstore.Option) *maintEnv {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlstore.OpenSQLite(ctx, dbPath, opts...)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	so.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), so)
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	tprops := map[string]string{"format-version": "4"}
	for k, v := range props {
		tprops[k] = v
	}
	res, err := svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
		Name: "t", Properties: tprops,
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"c1","type":"double","required":false},{"id":2,"name":"c2","type":"double","required":false}]}`),
	})
	require.NoError(t, err)
	var meta struct {
		Location string `json:"location"`
		UUID     string `json:"table-uuid"`
	}
	require.NoError(t, jsonUnmarshal(res.Metadata, &meta))
	e := &maintEnv{ctx: ctx, st: st, svc: svc, id: service.Ident{Namespace: []string{"ns"}, Name: "t"},
		dir: strings.TrimPrefix(meta.Location, "file://"), uuid: meta.UUID, dbPath: dbPath}
	var adds []service.DataFileInput
	for _, n := range []string{"a", "b"} {
		size := writeDoubles(t, filepath.Join(e.dir, "data", n+".parquet"), []int{1, 2}, 10)
		adds = append(adds, service.DataFileInput{Location: "data/" + n + ".parquet", FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: size})
	}
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: e.id, AddDataFiles: adds})
	require.NoError(t, err)
	e.update(t, "cf1.parquet")
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: e.id, RemoveFiles: []string{"data/b.parquet"}})
	require.NoError(t, err)
	e.update(t, "cf2.parquet")
	return e
}

// update commits a column file for field 2 of base a.
func (e *maintEnv) update(t *testing.T, name string) {
	size := writeDoubles(t, filepath.Join(e.dir, "data", name), []int{2}, 10)
	_, err := e.svc.CommitColumnFiles(e.ctx, "wh", service.ColumnFilesCommit{Ident: e.id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: "data/a.parquet", Location: "data/" + name, FileFormat: "parquet", FieldIDs: []int{2}, FileSizeInBytes: size, RecordCount: 10}}})
	require.NoError(t, err)
}

// files lists the table's files relative to its directory.
func (e *maintEnv) files(t *testing.T) []string {
	var out []string
	require.NoError(t, filepath.WalkDir(e.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(e.dir, p)
			out = append(out, rel)
		}
		return err
	}))
	return out
}

// snapshots returns the table's snapshot ids, oldest first.
func (e *maintEnv) snapshots(t *testing.T) []int64 {
	res, err := e.svc.Tables().LoadTable(e.ctx, "wh", e.id, "", service.NoDelegation)
	require.NoError(t, err)
	var meta struct {
		Snapshots []struct {
			ID int64 `json:"snapshot-id"`
		} `json:"snapshots"`
	}
	require.NoError(t, jsonUnmarshal(res.Metadata, &meta))
	var ids []int64
	for _, s := range meta.Snapshots {
		ids = append(ids, s.ID)
	}
	return ids
}

func countWith(files []string, sub string) int {
	n := 0
	for _, f := range files {
		if strings.Contains(f, sub) {
			n++
		}
	}
	return n
}

// TestMaintainExpiresV4: a dry run lists and changes nothing; the real run
// expires every snapshot but the current one and deletes exactly the files
// only they referenced (the removed base, the retired column file, old
// roots and leaves), and the table still reads the same live files.
func TestMaintainExpiresV4(t *testing.T) {
	e := newMaintEnv(t)
	before := e.files(t)
	snaps := e.snapshots(t)
	require.Len(t, snaps, 4)
	later := time.Now().Add(time.Minute)

	dry, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: later, RetainLast: 1, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, snaps[:3], dry.ExpiredSnapshots)
	require.Contains(t, dry.DeletedFiles, "data/b.parquet")
	require.Contains(t, dry.DeletedFiles, "data/cf1.parquet")
	require.NotContains(t, dry.DeletedFiles, "data/a.parquet")
	require.NotContains(t, dry.DeletedFiles, "data/cf2.parquet")
	require.Equal(t, before, e.files(t), "a dry run deletes nothing")
	require.Equal(t, snaps, e.snapshots(t), "a dry run expires nothing")

	rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: later, RetainLast: 1})
	require.NoError(t, err)
	require.Equal(t, dry.ExpiredSnapshots, rep.ExpiredSnapshots)
	require.ElementsMatch(t, dry.DeletedFiles, rep.DeletedFiles)
	require.Zero(t, rep.FailedFiles)
	require.Equal(t, snaps[3:], e.snapshots(t))
	after := e.files(t)
	for _, f := range rep.DeletedFiles {
		require.NotContains(t, after, f)
	}
	require.Len(t, after, len(before)-len(rep.DeletedFiles)+1, "only the new metadata file was added")
	for _, f := range []string{"data/a.parquet", "data/cf2.parquet"} {
		require.Contains(t, after, f)
	}
	// The current snapshot still plans: every file it names exists.
	plan, err := e.svc.Planner().PlanScan(e.ctx, "wh", e.id, service.PlanRequest{CaseSensitive: true, ColumnFilesOK: true})
	require.NoError(t, err)
	tasks := plan.Tasks
	require.Len(t, tasks, 1)
	require.Equal(t, "a.parquet", filepath.Base(tasks[0].Location))
	require.Len(t, tasks[0].ColumnFiles, 1)
	require.Equal(t, "cf2.parquet", filepath.Base(tasks[0].ColumnFiles[0].Location))
	rows, err := e.st.ListPendingDeletes(e.ctx, e.uuid)
	require.NoError(t, err)
	require.Empty(t, rows, "the queue is drained")
	obj, err := e.st.ObjectGet(e.ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
	require.NoError(t, err)
	var goneLeaves, keptLeaves []string
	for _, f := range before {
		if strings.HasSuffix(f, "-m0.parquet") {
			if slices.Contains(rep.DeletedFiles, f) {
				goneLeaves = append(goneLeaves, "file://"+e.dir+"/"+f)
			} else {
				keptLeaves = append(keptLeaves, "file://"+e.dir+"/"+f)
			}
		}
	}
	require.NotEmpty(t, goneLeaves)
	indexed, err := e.st.FileIndexLeaves(e.ctx, obj.ID, goneLeaves)
	require.NoError(t, err)
	require.Empty(t, indexed, "expired leaves leave the base-file index")
	indexed, err = e.st.FileIndexLeaves(e.ctx, obj.ID, keptLeaves)
	require.NoError(t, err)
	require.Len(t, indexed, len(keptLeaves), "live leaves stay indexed")
	require.Less(t, countWith(after, "metadata/snap-"), countWith(before, "metadata/snap-"))

	// Nothing left to expire: a second run does nothing.
	again, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: later, RetainLast: 1})
	require.NoError(t, err)
	require.Empty(t, again.ExpiredSnapshots)
	require.Empty(t, again.DeletedFiles)
}

// TestMaintainRetainsHistory: snapshots newer than the cut-off, the last N
// ancestors and ref heads stay.
func TestMaintainRetainsHistory(t *testing.T) {
	e := newMaintEnv(t)
	snaps := e.snapshots(t)
	rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	require.Empty(t, rep.ExpiredSnapshots, "nothing is older than an hour")
	rep, err = e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Minute), RetainLast: 3})
	require.NoError(t, err)
	require.Equal(t, snaps[:1], rep.ExpiredSnapshots)
	require.Equal(t, snaps[1:], e.snapshots(t))
}

// TestMaintainCrashWindows: a clean-up cut short at each point loses no
// referenced file and is finished by the next run. The windows are set up
// through the store, as a process killed there would leave them.
func TestMaintainCrashWindows(t *testing.T) {
	t.Run("killed before the commit landed", func(t *testing.T) {
		e := newMaintEnv(t)
		before := e.files(t)
		snaps := e.snapshots(t)
		dry, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Minute), RetainLast: 1, DryRun: true})
		require.NoError(t, err)
		e.queue(t, dry)
		// The next run keeps every snapshot (nothing old enough): the queued
		// rows belong to an expiry that never landed, so no file goes.
		rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(-time.Hour)})
		require.NoError(t, err)
		require.Empty(t, rep.DeletedFiles)
		require.Equal(t, before, e.files(t))
		require.Equal(t, snaps, e.snapshots(t))
		rows, err := e.st.ListPendingDeletes(e.ctx, e.uuid)
		require.NoError(t, err)
		require.Empty(t, rows, "rows of an expiry that did not land are dropped")
	})
	t.Run("killed after the commit, half the files deleted", func(t *testing.T) {
		e := newMaintEnv(t)
		dry, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Minute), RetainLast: 1, DryRun: true})
		require.NoError(t, err)
		e.queue(t, dry)
		ids := make([]string, len(dry.ExpiredSnapshots))
		for i, id := range dry.ExpiredSnapshots {
			ids[i] = fmt.Sprint(id)
		}
		_, err = e.svc.CommitTable(e.ctx, "wh", service.TableChange{Ident: e.id, Requirements: []byte(`[]`),
			Updates: []byte(`[{"action":"remove-snapshots","snapshot-ids":[` + strings.Join(ids, ",") + `]}]`)})
		require.NoError(t, err)
		half := dry.DeletedFiles[:len(dry.DeletedFiles)/2]
		for _, f := range half {
			require.NoError(t, os.Remove(filepath.Join(e.dir, f)))
		}
		rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Minute), RetainLast: 1})
		require.NoError(t, err)
		require.Empty(t, rep.ExpiredSnapshots)
		require.Equal(t, len(dry.DeletedFiles), rep.ResumedFiles, "the next run finishes the queue, already-deleted files included")
		after := e.files(t)
		for _, f := range dry.DeletedFiles {
			require.NotContains(t, after, f)
		}
		require.Contains(t, after, "data/a.parquet")
		require.Contains(t, after, "data/cf2.parquet")
		_, err = e.svc.Planner().PlanScan(e.ctx, "wh", e.id, service.PlanRequest{CaseSensitive: true, ColumnFilesOK: true})
		require.NoError(t, err)
	})
}

// queue records a dry run's files as the run would before its commit.
func (e *maintEnv) queue(t *testing.T, dry *service.MaintainReport) {
	loc := "file://" + e.dir
	var rows []store.PendingDelete
	for _, f := range dry.DeletedFiles {
		rows = append(rows, store.PendingDelete{TableUUID: e.uuid, Location: loc + "/" + f, SnapshotIDs: slices.Clone(dry.ExpiredSnapshots), CreatedAt: time.Now()})
	}
	require.NoError(t, e.st.AddPendingDeletes(e.ctx, rows))
}

// TestMaintainDeletesExpiredStatistics: the statistics and partition
// statistics files of expired snapshots are deleted with them; those of
// the kept snapshot stay.
func TestMaintainDeletesExpiredStatistics(t *testing.T) {
	e := newMaintEnv(t)
	snaps := e.snapshots(t)
	var ups []string
	for i, id := range []int64{snaps[0], snaps[3]} {
		for _, kind := range []string{"stats", "pstats"} {
			name := fmt.Sprintf("metadata/%s-%d.puffin", kind, i)
			require.NoError(t, os.WriteFile(filepath.Join(e.dir, name), []byte("x"), 0o644))
			loc := "file://" + filepath.Join(e.dir, name)
			if kind == "stats" {
				ups = append(ups, fmt.Sprintf(`{"action":"set-statistics","snapshot-id":%d,"statistics":{"snapshot-id":%d,"statistics-path":%q,"file-size-in-bytes":1,"file-footer-size-in-bytes":1,"blob-metadata":[]}}`, id, id, loc))
			} else {
				ups = append(ups, fmt.Sprintf(`{"action":"set-partition-statistics","partition-statistics":{"snapshot-id":%d,"statistics-path":%q,"file-size-in-bytes":1}}`, id, loc))
			}
		}
	}
	_, err := e.svc.CommitTable(e.ctx, "wh", service.TableChange{Ident: e.id, Requirements: json.RawMessage(`[]`), Updates: json.RawMessage("[" + strings.Join(ups, ",") + "]")})
	require.NoError(t, err)
	rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Minute), RetainLast: 1})
	require.NoError(t, err)
	require.Equal(t, snaps[:3], rep.ExpiredSnapshots)
	require.Contains(t, rep.DeletedFiles, "metadata/stats-0.puffin")
	require.Contains(t, rep.DeletedFiles, "metadata/pstats-0.puffin")
	after := e.files(t)
	require.NotContains(t, after, "metadata/stats-0.puffin")
	require.NotContains(t, after, "metadata/pstats-0.puffin")
	require.Contains(t, after, "metadata/stats-1.puffin", "the kept snapshot's statistics stay")
	require.Contains(t, after, "metadata/pstats-1.puffin")
}
