package fault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/anishathalye/porcupine"
	"github.com/jackc/pgx/v5"
)

// failoverReplicas is the number of catalog replicas of the failover test.
const failoverReplicas = 2

// failoverScenario is one replication mode of the failover test.
type failoverScenario struct {
	name string
	// sync: the primary has synchronous_standby_names = '*', so a COMMIT
	// is answered only once the standby has flushed its WAL.
	sync bool
	// stall: the replication link drops everything for standbyStall before
	// the kill, so the standby is that far behind when the primary dies.
	stall bool
}

// standbyStall is how long the stalled scenarios' replication link drops
// the WAL before the primary is killed.
const standbyStall = time.Second

// failoverFigures is what one scenario measured.
type failoverFigures struct {
	scenario              string
	commits               commitTally
	missingFiles          int
	linearizable          string
	onlyOld               int           // commits the killed primary had and the promoted standby lacks
	phantomReads          int           // reads that saw one of those
	lagBytes              int64         // the standby's flush position behind the primary's WAL just before the kill (-1: unknown)
	outage, firstAckAfter time.Duration // kill to promoted; promoted to the first acknowledged commit
	wall                  time.Duration
}

// TestPostgresFailover runs the catalog on a Postgres primary with a
// streaming standby (two local clusters, the standby made by pg_basebackup
// -R) and fails the primary over while 16 writers and 4 readers use one
// table through 2 catalog replicas. The replicas' database URL names both
// servers with target_session_attrs=read-write, so the pool connects to
// whichever is the primary. Mid-run the primary is killed (SIGKILL to the
// postmaster and every backend at once, as a crash of its host), the
// catalog is probed while no server accepts writes, and the standby is
// promoted with pg_ctl promote; the writers keep going. The standby
// streams through toxiproxy. Four scenarios:
//
//   - sync (synchronous_standby_names = '*'): every acknowledged commit must
//     be in the table after promotion;
//   - async: a commit acknowledged by the primary whose WAL had not reached
//     the standby is lost. The test measures and prints how many; it fails
//     only on a loss that replication does not explain. The old primary's
//     data directory is started again afterwards (on a port the catalog
//     does not know) and its table pointer read: a lost acknowledged commit
//     must be there, i.e. it landed on the old timeline and was cut off by
//     the failover, not dropped by the catalog;
//   - sync-stalled and async-stalled: the same, but the replication link
//     drops the WAL for standbyStall before the kill, so the standby is
//     behind when the primary dies (on loopback it is otherwise 0 bytes
//     behind, and async loses nothing). Sync commits wait through the stall
//     and are answered 500 CommitStateUnknown at the kill, never 200 (the
//     one holding the row may or may not have reached the standby: its
//     commit record can arrive without its confirmation getting back);
//     async ones are acknowledged and lost, which is what the scenario
//     measures.
//
// In both it asserts: no commit answered "nothing committed" (409, 503,
// another 500) landed; no metadata file named by the table is missing;
// every replica agrees at the end; reads while no primary is up answer 503;
// no error answer shows internals; commits are acknowledged before the
// kill and after the promotion; and the history is linearizable
// (porcupine).
//
// The killed primary may hold commits the standby never got. With a
// synchronous standby these were never acknowledged and never seen:
// Postgres makes a commit visible to other sessions only once the standby
// has confirmed it (the backend leaves the running set after the
// synchronous wait), so no read may have seen one ("phantom" reads must
// be 0), and the whole history must be linearizable as recorded. With an
// asynchronous standby a commit is visible, and may be acknowledged, before
// the standby has it: a read may have seen one that the failover then cut
// off. There the history checked is the surviving timeline's: the attempts
// of those commits are dropped and reads forget their keys. That is sound
// because the standby's WAL is a prefix of the primary's: whatever it has,
// it has with everything committed before it; what is checked is that the
// catalog served that timeline linearizably. It prints one line of figures
// per scenario.
func TestPostgresFailover(t *testing.T) {
	requireFault(t)
	begin := time.Now()
	work := t.TempDir()
	bin := buildCatalog(t, work)
	t.Logf("built the catalog in %v", time.Since(begin).Round(time.Millisecond))
	tmpl := newPostgresDir(t, "template")
	tmpl.initdb(t)
	scenarios := []failoverScenario{{name: "sync", sync: true}, {name: "async"},
		{name: "sync-stalled", sync: true, stall: true}, {name: "async-stalled", stall: true}}
	figs := make([]failoverFigures, len(scenarios))
	// The scenarios run -parallel at a time (GOMAXPROCS, 2 here): most of
	// their time is the timeline's waiting.
	t.Run("scenarios", func(t *testing.T) {
		for i, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				figs[i] = runFailover(t, bin, tmpl, sc)
			})
		}
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %8s %5s %4s %5s %7s %4s %7s %12s %8s %7s %9s %8s %9s %6s  statuses\n", "mode", "attempts", "acked", "lost", "wrong",
		"unknown", "503", "missing", "linearizable", "old-only", "phantom", "lag-bytes", "outage", "first-ack", "wall")
	for _, f := range figs {
		if f.scenario == "" {
			continue // failed before its figures
		}
		c := f.commits
		fmt.Fprintf(&b, "%-13s %8d %5d %4d %5d %7d %4d %7d %12s %8d %7d %9d %8v %9v %6v  %s\n", f.scenario, c.attempts, c.acked, len(c.lost), len(c.wrong),
			c.unknown, c.unavailable, f.missingFiles, f.linearizable, f.onlyOld, f.phantomReads, f.lagBytes,
			f.outage.Round(time.Millisecond), f.firstAckAfter.Round(time.Millisecond), f.wall.Round(time.Second), c.statusList())
	}
	t.Logf("Postgres failover under %d writers (-stalled: the replication link dropped the WAL for %v before the kill; lost: acknowledged but not in the table after promotion; wrong: answered "+
		"not-applied but landed; missing: metadata files the table names that do not exist; old-only: commits only the killed "+
		"primary had; linearizable yes (surv.): on the surviving timeline, those commits left out; phantom: reads that saw one of those; lag-bytes: standby flush behind the primary's WAL just before the "+
		"kill; outage: kill to promotion done; first-ack: promotion to the first acknowledged commit):\n%s", writers, standbyStall, b.String())
}

// runFailover runs one scenario and returns its figures; it fails t on a
// broken promise.
func runFailover(t *testing.T, bin string, tmpl *postgres, sc failoverScenario) failoverFigures {
	begin := time.Now()
	figs := failoverFigures{scenario: sc.name, lagBytes: -1, linearizable: "not run"}
	work := t.TempDir()
	primarySettings := []string{"wal_level=replica", "max_wal_senders=4", "hot_standby=on"}
	if sc.sync {
		primarySettings = append(primarySettings, "synchronous_standby_names=*")
	}
	primary := startPostgresCopy(t, tmpl, primarySettings...)
	primary.name = "primary"
	// The standby streams through toxiproxy, so that the stalled scenarios
	// can cut its link. Its own settings must not ask for a synchronous
	// standby: once promoted it has none, and every COMMIT would wait for
	// ever.
	link := startToxiproxy(t, "replication", "127.0.0.1:"+strconv.Itoa(primary.port))
	standby := startStandby(t, link.Listen, "hot_standby=on")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := waitStreaming(ctx, primary, sc.sync); err != nil {
		t.Fatal(err)
	}
	dbURL := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?target_session_attrs=read-write&sslmode=disable&connect_timeout=2",
		primary.port, standby.port)
	warehouse := filepath.Join(work, "warehouse")
	reps := make([]*replica, failoverReplicas)
	for i := range reps {
		reps[i] = startReplica(t, i, bin, dbURL, warehouse, work, i == 0)
	}
	uuid, err := createTable(ctx, reps[0].addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: primary :%d, standby :%d streaming, %d replicas up, table created at %v", sc.name, primary.port, standby.port,
		len(reps), time.Since(begin).Round(time.Millisecond))

	w := &workload{rec: newRecorder(), reps: reps, uuid: uuid, internals: []string{
		"127.0.0.1:" + strconv.Itoa(primary.port), "127.0.0.1:" + strconv.Itoa(standby.port), primary.root, standby.root, work,
		"SQLSTATE", "pgx", "postgres://", "failed to connect", "read only", "target_session_attrs", "standby"}}
	w.setPhase("steady")
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { w.writer(ctx, i) })
	}
	for i := range readers {
		wg.Go(func() { w.reader(ctx, i) })
	}
	var stall *toxiproxy.Proxy
	if sc.stall {
		stall = link
	}
	tl, tlErr := w.failover(ctx, primary, standby, stall)
	w.stop.Store(true)
	wg.Wait()
	if tlErr != nil {
		t.Fatal(tlErr)
	}
	figs.lagBytes, figs.outage = tl.lagBytes, time.Duration(tl.promoted-tl.killed)
	t.Logf("%s: workload done at %v", sc.name, time.Since(begin).Round(time.Millisecond))

	final := w.finalReads(ctx, t)
	ops := w.rec.snapshot()
	have := writerKeys(final.Metadata.Properties)
	// Read the killed primary's last state: what it had that the promoted
	// standby does not is what the failover cut off.
	old, err := oldPrimaryKeys(ctx, t, primary)
	if err != nil {
		t.Fatalf("read the killed primary's table pointer: %v", err)
	}
	onlyOld := old.minus(have)
	figs.onlyOld = onlyOld.len()
	for _, o := range ops {
		if !o.write && o.readOK && o.seen.len() != o.seen.minus(onlyOld).len() {
			figs.phantomReads++
		}
	}

	logSummary(t, ops)
	checkOutageProbes(t, tl.probes)
	checkNoLeaks(t, ops)
	var excused keySet
	if !sc.sync {
		excused = onlyOld
	}
	figs.commits = checkAcknowledged(t, ops, final, excused)
	checkMetadataChain(t, final)
	missing := missingMetadataFiles(final)
	figs.missingFiles = len(missing)
	if len(missing) > 0 {
		t.Errorf("metadata files named by the table are missing: %v", missing)
	}
	checkPhasesExercised(t, ops, "steady", "after-promotion")
	for _, o := range ops {
		if o.write && o.out == applied && o.call >= tl.promoted {
			if d := time.Duration(o.ret - tl.promoted); figs.firstAckAfter == 0 || d < figs.firstAckAfter {
				figs.firstAckAfter = d
			}
		}
	}

	if sc.stall {
		// The stall must have bitten: WAL the standby never flushed, and
		// under sync not one commit sent during it acknowledged.
		if tl.lagBytes <= 0 {
			t.Errorf("the standby was %d bytes behind at the kill; the stalled link should have kept WAL from it", tl.lagBytes)
		}
		for _, o := range ops {
			if sc.sync && o.write && o.out == applied && o.phase == "standby-stalled" {
				t.Errorf("%s was acknowledged while the synchronous standby received nothing", describeAttempt(o))
			}
		}
	}
	checked, projected := ops, false
	if sc.sync && figs.phantomReads > 0 {
		t.Errorf("%d reads saw a commit that only the killed primary had, under synchronous replication", figs.phantomReads)
	}
	if !sc.sync && onlyOld.len() > 0 {
		checked, projected = withoutKeys(ops, onlyOld), true
		t.Logf("%s: %d commits reached only the killed primary (%d of them acknowledged, %d reads saw one); checking the surviving timeline's history",
			sc.name, onlyOld.len(), len(figs.commits.lost), figs.phantomReads)
	}
	switch res := checkLinearizable(t, checked, have); {
	case res == porcupine.Ok && projected:
		figs.linearizable = "yes (surv.)"
	case res == porcupine.Ok:
		figs.linearizable = "yes"
	default:
		figs.linearizable = string(res)
	}
	figs.wall = time.Since(begin)
	c := figs.commits
	t.Logf("%s: attempts %d, acknowledged %d, lost %d, wrongly answered %d, unknown %d, 503 %d, tables pointing at missing files %d, "+
		"linearizable %s; only on the killed primary %d (phantom reads %d); standby lag before the kill %d bytes; statuses: %s",
		sc.name, c.attempts, c.acked, len(c.lost), len(c.wrong), c.unknown, c.unavailable, boolInt(len(missing) > 0),
		figs.linearizable, figs.onlyOld, figs.phantomReads, figs.lagBytes, c.statusList())
	return figs
}

// failoverTimeline is when the failover's steps happened (recorder time).
type failoverTimeline struct {
	killed, promoted int64
	lagBytes         int64
	probes           []response
}

// failover is the timeline: a steady stretch, (with a stall link) the
// replication link dropping the WAL for standbyStall, the primary killed,
// probes while no server accepts writes, the standby promoted, a stretch
// on the new primary.
func (w *workload) failover(ctx context.Context, primary, standby *postgres, stall *toxiproxy.Proxy) (failoverTimeline, error) {
	tl := failoverTimeline{lagBytes: -1}
	time.Sleep(2 * time.Second)
	if stall != nil {
		w.setPhase("standby-stalled")
		if _, err := stall.Toxics.AddToxicJson(strings.NewReader(
			`{"name":"drop","type":"timeout","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`)); err != nil {
			return tl, fmt.Errorf("stall the replication link: %w", err)
		}
		time.Sleep(standbyStall)
	}
	if lag, err := replicationLag(ctx, primary); err == nil {
		tl.lagBytes = lag
	}
	w.setPhase("primary-killed")
	tl.killed = w.rec.now()
	if err := primary.crash(); err != nil {
		return tl, err
	}
	tl.probes = w.probe(700*time.Millisecond, w.reps...)
	w.setPhase("promoting")
	if out, err := standby.tool("pg_ctl", "promote", "-D", standby.data, "-w", "-t", "30").CombinedOutput(); err != nil {
		return tl, fmt.Errorf("pg_ctl promote: %v: %s", err, out)
	}
	tl.promoted = w.rec.now()
	w.setPhase("after-promotion")
	time.Sleep(2500 * time.Millisecond)
	return tl, nil
}

// startStandby makes a streaming standby of the primary at addr
// (host:port) with pg_basebackup -R (standby.signal, and primary_conninfo
// naming addr in postgresql.auto.conf) and starts it with the given extra
// settings.
func startStandby(t *testing.T, addr string, settings ...string) *postgres {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p := newPostgresDir(t, "standby")
	p.settings = settings
	out, err := p.tool("pg_basebackup", "-D", p.data, "-h", host, "-p", port, "-U", "postgres",
		"-X", "stream", "-R", "--checkpoint=fast", "--no-sync").CombinedOutput()
	if err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	p.listen(t)
	return p
}

// waitStreaming waits until the primary reports one standby streaming,
// synchronous or asynchronous as asked.
func waitStreaming(ctx context.Context, primary *postgres, sync bool) error {
	want := "async"
	if sync {
		want = "sync"
	}
	conn, err := pgx.Connect(ctx, primary.url())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = $1`, want).Scan(&n)
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
	}
	return fmt.Errorf("no %s standby streaming from the primary after 30 s", want)
}

// replicationLag is how many bytes of WAL the primary has written that the
// standby has not yet flushed.
func replicationLag(ctx context.Context, primary *postgres) (int64, error) {
	conn, err := pgx.Connect(ctx, primary.url())
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var lag int64
	err = conn.QueryRow(ctx, `SELECT COALESCE(max(pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn)), -1)::bigint FROM pg_stat_replication`).Scan(&lag)
	return lag, err
}

// crash kills the server as a crash of its host would: the postmaster is
// stopped (so that it forks nothing more), then it and every process it
// started get SIGKILL together. No backend answers again and the WAL
// sender sends nothing more.
func (p *postgres) crash() error {
	pid := p.proc.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stop the postmaster: %w", err)
	}
	kids := childPIDs(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	select {
	case <-p.proc.done:
	case <-time.After(10 * time.Second):
		return errors.New("postmaster still running 10 s after SIGKILL")
	}
	// The orphans are reparented; wait until none is alive (zombies hold
	// no shared memory), so that the data directory can be started again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		alive := 0
		for _, k := range kids {
			if st, err := procState(k); err == nil && st != 'Z' {
				alive++
			}
		}
		if alive == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d postgres processes still alive 10 s after SIGKILL", alive)
		}
	}
}

// childPIDs lists the processes whose parent is pid.
func childPIDs(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, err := procPPID(n); err == nil && pp == pid {
			out = append(out, n)
		}
	}
	return out
}

// procStat returns the fields of /proc/pid/stat after the command name.
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return nil, errors.New("short /proc stat")
	}
	return f, nil
}

func procPPID(pid int) (int, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1])
}

func procState(pid int) (byte, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return f[0][0], nil
}

// oldPrimaryKeys starts the killed primary's data directory again (crash
// recovery replays its WAL) on a new port that no catalog replica knows,
// and returns the writer keys of the table's metadata file there. It stops
// the server again.
func oldPrimaryKeys(ctx context.Context, t *testing.T, p *postgres) (keySet, error) {
	t.Helper()
	p.listen(t)
	defer p.proc.signal(syscall.SIGQUIT, 10*time.Second)
	conn, err := pgx.Connect(ctx, p.url())
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var loc string
	if err := conn.QueryRow(ctx, `SELECT metadata_location FROM catalog_objects WHERE kind = 'table'`).Scan(&loc); err != nil {
		return nil, err
	}
	props, err := readMetadataProps(loc)
	if err != nil {
		return nil, err
	}
	return writerKeys(props), nil
}

// withoutKeys is the history as if the commits of keys had never been
// sent: their attempts are dropped and reads forget them.
func withoutKeys(ops []op, keys keySet) []op {
	out := make([]op, 0, len(ops))
	for _, o := range ops {
		if o.write && keys.has(o.key) {
			continue
		}
		if !o.write && o.readOK {
			o.seen = o.seen.minus(keys)
		}
		out = append(out, o)
	}
	return out
}
