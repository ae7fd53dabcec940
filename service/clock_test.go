package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// Clock faults. Replicas share one database but each has its own clock; a
// replica is modelled by its own service.New over the shared store, its
// clock by Options.Now. The database clock (store.Store.Clock) is the real
// one here, for SQLite and Postgres alike.

const tenMinutes = 10 * time.Minute

// offsetClock is a replica clock off the true one by a fixed amount.
func offsetClock(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// noDBClock is the store as seen by a replica that cannot read the
// database clock: it then has only its own.
type noDBClock struct{ store.Store }

func (noDBClock) Clock(context.Context) (time.Time, error) {
	return time.Time{}, errors.New("database clock unreadable")
}

// replica is one catalog process over the shared store.
func replica(st store.Store, now func() time.Time) *service.Service {
	return service.New(st, storage.NewProvider(), service.Options{Now: now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// tableTimes is what a table's metadata says about time.
type tableTimes struct {
	Location    string `json:"location"`
	LastUpdated int64  `json:"last-updated-ms"`
	LastSeq     int64  `json:"last-sequence-number"`
	Current     *int64 `json:"current-snapshot-id"`
	MetadataLog []struct {
		File string `json:"metadata-file"`
		TS   int64  `json:"timestamp-ms"`
	} `json:"metadata-log"`
	SnapshotLog []struct {
		ID int64 `json:"snapshot-id"`
		TS int64 `json:"timestamp-ms"`
	} `json:"snapshot-log"`
	Snapshots []struct {
		ID int64 `json:"snapshot-id"`
		TS int64 `json:"timestamp-ms"`
	} `json:"snapshots"`
}

func loadTimes(t *testing.T, svc *service.Service, id service.Ident) tableTimes {
	t.Helper()
	res, err := svc.LoadTable(context.Background(), "wh", id, "all", false)
	require.NoError(t, err)
	var tt tableTimes
	require.NoError(t, jsonUnmarshal(res.Metadata, &tt))
	return tt
}

// clockOp is one commit of the alternating history: what it changes, on
// which replica.
type clockOp struct {
	on   string // replica: "true", "fast", "slow"
	kind string // "props", "append" (client clock: true time plus clientSkew), "rollback" (to an older snapshot)
	// clientSkew dates an appended snapshot by a client clock this far off.
	clientSkew time.Duration
}

// commitOp commits op on svc; appends get fresh ids.
func commitOp(t *testing.T, svc *service.Service, id service.Ident, before tableTimes, op clockOp, n int) error {
	t.Helper()
	var ups string
	switch op.kind {
	case "props":
		ups = fmt.Sprintf(`[{"action":"set-properties","updates":{"n":"%d"}}]`, n)
	case "append":
		snap := int64(1000 + n)
		parent := ""
		if before.Current != nil {
			parent = fmt.Sprintf(`"parent-snapshot-id":%d,`, *before.Current)
		}
		ts := time.Now().Add(op.clientSkew).UnixMilli()
		ups = fmt.Sprintf(`[{"action":"add-snapshot","snapshot":{"snapshot-id":%d,%s"sequence-number":%d,"timestamp-ms":%d,`+
			`"manifest-list":"%s/metadata/snap-%d.avro","summary":{"operation":"append"},"schema-id":0}},`+
			`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%d}]`,
			snap, parent, before.LastSeq+1, ts, before.Location, snap, snap)
	case "rollback":
		to := before.Snapshots[0].ID
		if before.Current != nil && *before.Current == to {
			to = before.Snapshots[1].ID
		}
		ups = fmt.Sprintf(`[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%d}]`, to)
	default:
		t.Fatalf("unknown op %q", op.kind)
	}
	_, err := svc.CommitTable(context.Background(), "wh", service.TableChange{Ident: id, Updates: []byte(ups)})
	return err
}

// requireOrdered checks what one commit did to the table's times: it
// stamped a later last-updated-ms than before, logged the replaced file at
// the previous last-updated-ms, and kept both logs in order, no entry
// after last-updated-ms.
func requireOrdered(t *testing.T, before, after tableTimes, step string) {
	t.Helper()
	require.Greater(t, after.LastUpdated, before.LastUpdated, "%s: last-updated-ms must increase", step)
	require.NotEmpty(t, after.MetadataLog, step)
	last := after.MetadataLog[len(after.MetadataLog)-1]
	require.Equal(t, before.LastUpdated, last.TS, "%s: the metadata log dates the replaced file by its last-updated-ms", step)
	for i := 1; i < len(after.MetadataLog); i++ {
		require.Less(t, after.MetadataLog[i-1].TS, after.MetadataLog[i].TS, "%s: metadata log in commit order", step)
	}
	for i := 1; i < len(after.SnapshotLog); i++ {
		require.Less(t, after.SnapshotLog[i-1].TS, after.SnapshotLog[i].TS, "%s: snapshot log in commit order", step)
	}
	if n := len(after.SnapshotLog); n > 0 {
		require.LessOrEqual(t, after.SnapshotLog[n-1].TS, after.LastUpdated, step)
		if len(before.SnapshotLog) < n {
			require.Equal(t, after.LastUpdated, after.SnapshotLog[n-1].TS, "%s: a new snapshot-log entry carries last-updated-ms", step)
		}
	}
}

// TestSkewedReplicasKeepCommitOrder alternates commits between replicas
// whose clocks are right, 10 minutes ahead and 10 minutes behind. With the
// database clock readable, every replica dates what it writes within
// MaxClockSkew of the true time, so clients with right clocks can keep
// appending; without it (each replica has only its own clock) a commit
// still never dates the table before its previous update. Either way
// last-updated-ms increases and both logs stay in commit order.
func TestSkewedReplicasKeepCommitOrder(t *testing.T) {
	withDB := []clockOp{
		{on: "fast", kind: "props"},
		{on: "slow", kind: "props"},
		{on: "true", kind: "append"},
		{on: "slow", kind: "append", clientSkew: -30 * time.Second}, // a client a little behind: within Iceberg's one-minute tolerance
		{on: "fast", kind: "append"},
		{on: "slow", kind: "rollback"},
		{on: "fast", kind: "props"},
		{on: "slow", kind: "append"},
		{on: "fast", kind: "rollback"},
		{on: "true", kind: "props"},
		{on: "slow", kind: "props"},
	}
	// Without the database clock a replica ahead dates the table ahead, and
	// a client with a right clock cannot append until the table's date is
	// less than a minute ahead of it (Iceberg's rule, in iceberg-go's
	// builder as in Java's): only changes the catalog dates itself.
	withoutDB := []clockOp{
		{on: "fast", kind: "props"},
		{on: "slow", kind: "props"},
		{on: "true", kind: "rollback"},
		{on: "slow", kind: "rollback"},
		{on: "fast", kind: "props"},
		{on: "slow", kind: "rollback"},
		{on: "true", kind: "props"},
		{on: "slow", kind: "props"},
	}
	cases := []struct {
		name    string
		dbClock bool
		ops     []clockOp
	}{
		{"database clock", true, withDB},
		{"replica clocks only", false, withoutDB},
	}
	for _, backend := range backends {
		for _, tc := range cases {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				st := store.Store(openStore(t, backend))
				setup := replica(st, time.Now)
				_, err := setup.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
				require.NoError(t, err)
				_, err = setup.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
				require.NoError(t, err)
				id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
				_, err = setup.CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t",
					Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)})
				require.NoError(t, err)
				// Two snapshots with right clocks, for rollbacks to go to.
				for n := range 2 {
					require.NoError(t, commitOp(t, setup, id, loadTimes(t, setup, id), clockOp{kind: "append"}, n))
				}
				if !tc.dbClock {
					st = noDBClock{st}
				}
				replicas := map[string]*service.Service{
					"true": replica(st, time.Now), "fast": replica(st, offsetClock(tenMinutes)), "slow": replica(st, offsetClock(-tenMinutes)),
				}
				before := loadTimes(t, setup, id)
				for i, op := range tc.ops {
					step := fmt.Sprintf("step %d (%s on the %s replica)", i, op.kind, op.on)
					start := time.Now()
					require.NoError(t, commitOp(t, replicas[op.on], id, before, op, 10+i), step)
					after := loadTimes(t, setup, id)
					requireOrdered(t, before, after, step)
					if tc.dbClock {
						// No replica dates the table far from the true time
						// (the clamp adds a millisecond per commit).
						require.GreaterOrEqual(t, after.LastUpdated, start.Add(-time.Minute).UnixMilli(), step)
						require.LessOrEqual(t, after.LastUpdated, time.Now().Add(time.Minute).UnixMilli(), step)
					}
					before = after
				}
			})
		}
	}
}

// TestSkewedClientSnapshots: a snapshot dated by a client clock 10 minutes
// off is refused (400, nothing committed) on every replica, a fast one
// included: 10 minutes ahead is in the future of the catalog clock, 10
// minutes behind is before the table's last update by more than Iceberg's
// one-minute tolerance.
func TestSkewedClientSnapshots(t *testing.T) {
	cases := []struct {
		name   string
		client time.Duration
		kind   service.Kind
	}{
		{"client ahead", tenMinutes, service.KindValidation},
		{"client behind", -tenMinutes, service.KindIllegalArgument},
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, backend)
			setup := replica(st, time.Now)
			_, err := setup.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
			require.NoError(t, err)
			_, err = setup.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
			require.NoError(t, err)
			id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
			_, err = setup.CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t",
				Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)})
			require.NoError(t, err)
			replicas := map[string]*service.Service{
				"true": replica(st, time.Now), "fast": replica(st, offsetClock(tenMinutes)), "slow": replica(st, offsetClock(-tenMinutes)),
			}
			for n, tc := range cases {
				for _, on := range []string{"true", "fast", "slow"} {
					before := loadTimes(t, setup, id)
					err := commitOp(t, replicas[on], id, before, clockOp{kind: "append", clientSkew: tc.client}, n)
					var se *service.Error
					require.True(t, errors.As(err, &se), "%s on the %s replica: %v", tc.name, on, err)
					require.Equal(t, tc.kind, se.Kind, "%s on the %s replica: %v", tc.name, on, err)
					require.Equal(t, before, loadTimes(t, setup, id), "nothing committed")
				}
			}
		})
	}
}

// TestClockCorrectedOnlyBeyondSkew: a replica within MaxClockSkew of the
// database keeps its own clock; one further off dates by the database's.
func TestClockCorrectedOnlyBeyondSkew(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, backend)
			for _, tc := range []struct {
				off, want time.Duration
			}{{30 * time.Second, 30 * time.Second}, {-30 * time.Second, -30 * time.Second}, {tenMinutes, 0}, {-tenMinutes, 0}} {
				svc := replica(st, offsetClock(tc.off))
				wh := fmt.Sprintf("wh%d", int(tc.off.Seconds())+1000)
				_, err := svc.CreateWarehouse(ctx, wh, "file://"+t.TempDir(), nil)
				require.NoError(t, err)
				_, err = svc.CreateNamespace(ctx, wh, []string{"ns"}, nil)
				require.NoError(t, err)
				start := time.Now()
				res, err := svc.CreateTable(ctx, wh, []string{"ns"}, service.CreateTableInput{Name: "t",
					Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)})
				require.NoError(t, err)
				var tt tableTimes
				require.NoError(t, jsonUnmarshal(res.Metadata, &tt))
				lo, hi := start.Add(tc.want).Add(-2*time.Second), time.Now().Add(tc.want).Add(2*time.Second)
				require.True(t, tt.LastUpdated >= lo.UnixMilli() && tt.LastUpdated <= hi.UnixMilli(),
					"replica %s off: last-updated-ms %s, want %s off the true time", tc.off, time.UnixMilli(tt.LastUpdated).Sub(start), tc.want)
			}
		})
	}
}

// settableClock is a replica clock tests move.
type settableClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *settableClock) set(at time.Time) {
	c.mu.Lock()
	c.at = at
	c.mu.Unlock()
}

// TestExpiryOnSkewedReplicas: a v4 table keeps 10 minutes of history
// (history.expire.max-snapshot-age-ms) and has snapshots 50, 12, 8 and 1
// minutes old by the true clock. Snapshot expiry measures ages on the
// catalog clock, checked against the database's, so every replica, 10
// minutes ahead or behind, expires exactly the 50- and 12-minute-old
// snapshots: the one ahead not the 8-minute-old one early, the one behind
// not keeping the 12-minute-old one. A replica that cannot read the
// database clock refuses to expire anything (503).
func TestExpiryOnSkewedReplicas(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, backend)
			// The history is written by a replica whose clock the test sets
			// (and which has no database clock to correct it).
			past := &settableClock{}
			origin := time.Now()
			past.set(origin.Add(-time.Hour))
			writer := replica(noDBClock{st}, past.Now)
			_, err := writer.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
			require.NoError(t, err)
			_, err = writer.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
			require.NoError(t, err)
			id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
			res, err := writer.CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
				Name: "t", Properties: map[string]string{"format-version": "4", service.PropMaxSnapshotAge: "600000"},
				Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"c1","type":"double","required":false}]}`),
			})
			require.NoError(t, err)
			var tt tableTimes
			require.NoError(t, jsonUnmarshal(res.Metadata, &tt))
			dir := strings.TrimPrefix(tt.Location, "file://")
			var snaps []int64
			for i, age := range []time.Duration{50 * time.Minute, 12 * time.Minute, 8 * time.Minute, time.Minute} {
				past.set(origin.Add(-age))
				name := fmt.Sprintf("data/f%d.parquet", i)
				size := writeDoubles(t, filepath.Join(dir, name), []int{1}, 10)
				_, err := writer.CommitFiles(ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: []service.DataFileInput{
					{Location: name, FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: size}}})
				require.NoError(t, err)
				tt := loadTimes(t, writer, id)
				require.NotNil(t, tt.Current)
				snaps = append(snaps, *tt.Current)
			}
			want := snaps[:2]

			for _, off := range []time.Duration{0, tenMinutes, -tenMinutes} {
				rep, err := replica(st, offsetClock(off)).Maintain(ctx, "wh", id, service.MaintainOptions{DryRun: true})
				require.NoError(t, err)
				require.Equal(t, want, rep.ExpiredSnapshots, "dry run on the replica %s off", off)
			}
			// An explicit age is measured on the catalog clock too.
			rep, err := replica(st, offsetClock(tenMinutes)).Maintain(ctx, "wh", id,
				service.MaintainOptions{DryRun: true, MaxSnapshotAge: 10 * time.Minute})
			require.NoError(t, err)
			require.Equal(t, want, rep.ExpiredSnapshots, "MaxSnapshotAge on the replica ahead")

			_, err = replica(noDBClock{st}, offsetClock(tenMinutes)).Maintain(ctx, "wh", id, service.MaintainOptions{})
			var se *service.Error
			require.True(t, errors.As(err, &se), "%v", err)
			require.Equal(t, service.KindUnavailable, se.Kind, "%v", err)
			require.Len(t, loadTimes(t, writer, id).Snapshots, 4, "nothing expired without the database clock")

			rep, err = replica(st, offsetClock(tenMinutes)).Maintain(ctx, "wh", id, service.MaintainOptions{})
			require.NoError(t, err)
			require.Equal(t, want, rep.ExpiredSnapshots)
			var left []int64
			for _, s := range loadTimes(t, writer, id).Snapshots {
				left = append(left, s.ID)
			}
			require.Equal(t, snaps[2:], left)
		})
	}
}
