package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSkewedReplicaClocks runs the writers and readers of the replica
// test on three replicas of one Postgres: one with a right clock, one
// whose clock is 10 minutes ahead and one 10 minutes behind (a fake clock:
// the CATALOG_TEST_CLOCK_SKEW knob of the fault binary, built with the
// faultknobs tag, since Go reads the time without libc and faketime
// cannot reach it). The skewed replicas must
// refuse every commit with 503 (nothing committed: the writers retry on
// the next replica) and fail /readyz, while serving reads; nothing
// acknowledged may be lost, the history must stay linearizable, and the
// table's logs must run forward in time and end near the database's now.
func TestSkewedReplicaClocks(t *testing.T) {
	requireFault(t)
	work := t.TempDir()
	bin := buildCatalog(t, work)
	pg := startPostgres(t)
	warehouse := filepath.Join(work, "warehouse")
	skews := []time.Duration{0, 10 * time.Minute, -10 * time.Minute}
	reps := make([]*replica, len(skews))
	for i, skew := range skews {
		r := &replica{idx: i, bin: bin, logDir: work}
		if skew != 0 {
			r.env = []string{"CATALOG_TEST_CLOCK_SKEW=" + skew.String()}
			r.probe = "/healthz" // not ready, by design
		}
		reps[i] = startReplicaAs(t, r, pg.url(), warehouse, i == 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for i, r := range reps {
		want := http.StatusOK
		if skews[i] != 0 {
			want = http.StatusServiceUnavailable
		}
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("replica %d (clock %v off): /readyz answered %d, want %d", i, skews[i], resp.StatusCode, want)
		}
	}
	uuid, err := createTable(ctx, reps[0].addr)
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{rec: newRecorder(), reps: reps, uuid: uuid,
		internals: []string{"127.0.0.1:" + strconv.Itoa(pg.port), pg.root, work, "SQLSTATE", "pgx", "postgres://"}}
	w.setPhase("skewed")
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { w.writer(ctx, i) })
	}
	for i := range readers {
		wg.Go(func() { w.reader(ctx, i) })
	}
	time.Sleep(6 * time.Second)
	w.stop.Store(true)
	wg.Wait()

	final := w.finalReads(ctx, t)
	ops := w.rec.snapshot()
	logSummary(t, ops)
	checkNoLeaks(t, ops)
	c := checkAcknowledged(t, ops, final, nil)
	checkMetadataChain(t, final)
	checkSkewedRefused(t, ops, skews)
	checkLogsForward(t, ops)
	res := checkLinearizable(t, ops, writerKeys(final.Metadata.Properties))
	missing := missingMetadataFiles(final)
	t.Logf("clock faults:\n%-34s %8s %6s %4s %5s %7s %13s %12s  statuses\n%-34s %8d %6d %4d %5d %7d %13d %12s  %s",
		"scenario", "attempts", "acked", "lost", "wrong", "unknown", "missing files", "linearizable",
		"replicas at 0, +10m, -10m", c.attempts, c.acked, len(c.lost), len(c.wrong), c.unknown, len(missing), res, c.statusList())
	if len(missing) > 0 {
		t.Errorf("the table's metadata log names missing files: %v", missing)
	}
}

// checkSkewedRefused: every commit sent to a skewed replica was answered
// 503 ServiceUnavailableException naming the clock, and the replica with
// the right clock acknowledged commits.
func checkSkewedRefused(t *testing.T, ops []op, skews []time.Duration) {
	t.Helper()
	right := 0
	for _, o := range ops {
		if !o.write {
			continue
		}
		if skews[o.replica] == 0 {
			if o.out == applied {
				right++
			}
			continue
		}
		if o.status != http.StatusServiceUnavailable || o.errType != "ServiceUnavailableException" || !strings.Contains(o.message, "clock") {
			t.Errorf("commit %s on replica %d (clock %v off) answered %d %s %q, want 503 about the clock",
				keyName(o.key), o.replica, skews[o.replica], o.status, o.errType, o.message)
		}
	}
	if right == 0 {
		t.Error("the replica with the right clock acknowledged no commit")
	}
}

// checkLogsForward: in the final metadata, the metadata log's timestamps
// never go back and last-updated-ms is not before its last entry nor more
// than a few seconds from now (this machine runs the database).
func checkLogsForward(t *testing.T, ops []op) {
	t.Helper()
	var body []byte
	for _, o := range ops {
		if o.phase == "final" && o.readOK {
			body = o.metadata
		}
	}
	var l struct {
		Metadata struct {
			LastUpdated int64 `json:"last-updated-ms"`
			Log         []struct {
				TS int64 `json:"timestamp-ms"`
			} `json:"metadata-log"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("final metadata: %v", err)
	}
	prev := int64(0)
	var back []string
	for i, e := range l.Metadata.Log {
		if e.TS < prev {
			back = append(back, fmt.Sprintf("entry %d at %d after %d", i, e.TS, prev))
		}
		prev = e.TS
	}
	if len(back) > 0 {
		t.Errorf("the metadata log goes back in time: %s", strings.Join(back, "; "))
	}
	if l.Metadata.LastUpdated < prev {
		t.Errorf("last-updated-ms %d is before the last metadata-log entry %d", l.Metadata.LastUpdated, prev)
	}
	if d := time.Since(time.UnixMilli(l.Metadata.LastUpdated)); d.Abs() > time.Minute {
		t.Errorf("last-updated-ms is %v from now", d.Round(time.Second))
	}
	t.Logf("metadata log: %d entries in time order; last-updated-ms %v ago", len(l.Metadata.Log), time.Since(time.UnixMilli(l.Metadata.LastUpdated)).Round(time.Millisecond))
}
