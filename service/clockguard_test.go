package service_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// skewedBy is a process clock d off the real one.
func skewedBy(d time.Duration) sqlstore.Option {
	return sqlstore.WithLocalClock(func() time.Time { return time.Now().Add(d) })
}

// TestSkewedReplicaRefusesCommits: a second replica of the same catalog
// whose clock is 10 minutes off (either way) is not ready, and refuses
// every commit with 503 before building anything (iceberg-go would stamp
// the metadata with its clock), expiry included; it still serves reads,
// and the table is as it was.
func TestSkewedReplicaRefusesCommits(t *testing.T) {
	e := newMaintEnv(t)
	before := e.snapshots(t)
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		st, err := sqlstore.OpenSQLite(e.ctx, e.dbPath, skewedBy(skew))
		require.NoError(t, err)
		var outcomes []string
		svc := service.New(st, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			OnCommit: func(o string) { outcomes = append(outcomes, o) }})
		off, ok := svc.ClockOffset()
		require.True(t, ok)
		require.InDelta(t, -skew.Seconds(), off.Seconds(), 1)
		require.InDelta(t, 0, time.Since(svc.Now()).Seconds(), 1, "the service's clock is the database's")

		require.Equal(t, fault.Unavailable, fault.KindOf(svc.Ping(e.ctx)), "skew %v: ready", skew)
		_, err = svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(time.Hour)})
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "skew %v: expiry ran: %v", skew, err)
		require.Regexp(t, `clock is (9m59\.\d|10m0(\.\d)?)s off`, err.Error())
		_, err = svc.CommitFiles(e.ctx, "wh", service.FilesCommit{Ident: e.id, RemoveFiles: []string{"data/a.parquet"}})
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "skew %v: commit: %v", skew, err)
		_, err = svc.Tables().CreateTable(e.ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t2",
			Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"c1","type":"double","required":false}]}`)})
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "skew %v: create: %v", skew, err)
		outcomes = nil
		_, err = svc.CommitTable(e.ctx, "wh", service.TableChange{Ident: service.Ident{Namespace: []string{"ns"}, Name: "t3"},
			Requirements: []byte(`[{"type":"assert-create"}]`),
			Updates: []byte(`[{"action":"assign-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"},{"action":"upgrade-format-version","format-version":2},` +
				`{"action":"add-schema","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"c1","type":"double","required":false}]},"last-column-id":1},` +
				`{"action":"set-current-schema","schema-id":-1},{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},` +
				`{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1}]`)})
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "skew %v: create by commit: %v", skew, err)
		require.Equal(t, []string{"unavailable"}, outcomes, "the refused create-by-commit is counted")
		_, err = svc.Tables().LoadTable(e.ctx, "wh", e.id, "", service.NoDelegation)
		require.NoError(t, err, "reads go on")
		st.Close()
	}
	require.Equal(t, before, e.snapshots(t), "nothing changed")
	require.NoError(t, e.svc.Ping(e.ctx), "the replica with the right clock is ready")
}

// TestExpiryUsesTheDatabaseClock: a replica 10 minutes ahead whose guard
// has been raised (MaxClockOffset 1 h) expires by the table's
// max-snapshot-age of 5 minutes as the database's clock counts it: the
// snapshots, seconds old, all stay. By its own clock they would all be
// older than 5 minutes and every one but the current would go.
func TestExpiryUsesTheDatabaseClock(t *testing.T) {
	e := newMaintEnvWith(t, map[string]string{service.PropMaxSnapshotAge: "300000"},
		service.Options{MaxClockOffset: time.Hour}, skewedBy(10*time.Minute))
	snaps := e.snapshots(t)
	require.Greater(t, len(snaps), 1)
	rep, err := e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{})
	require.NoError(t, err)
	require.Empty(t, rep.ExpiredSnapshots, "snapshots seconds old expired by a clock 10 minutes ahead")
	require.Equal(t, snaps, e.snapshots(t))

	// The same replica, had it dated the cut-off by its own clock, would
	// have expired them: the test can fail.
	rep, err = e.svc.Maintainer().Maintain(e.ctx, "wh", e.id, service.MaintainOptions{ExpireOlderThan: time.Now().Add(10*time.Minute - 5*time.Minute), DryRun: true})
	require.NoError(t, err)
	require.Equal(t, snaps[:len(snaps)-1], rep.ExpiredSnapshots)
}
