package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	replicas     = 3
	writers      = 16
	readers      = 4
	opsPerWriter = 60 // keys per writer: bounds the run and the history
	maxAttempts  = 6  // per key: bounded client retries
	maxVersions  = 5000
)

// TestKillReplicaAndRestartPostgres runs 16 writers and 4 readers on one
// table across 3 replicas, kill -9s a replica, then shuts Postgres down
// immediately and starts it again, and checks that no acknowledged commit
// is lost, that the property history is a chain of single-key additions,
// that reads during the outage answer 503, that no error answer exposes
// the database address, a server path or driver text, and that the whole
// history is linearizable.
func TestKillReplicaAndRestartPostgres(t *testing.T) {
	requireFault(t)
	begin := time.Now()
	work := t.TempDir()
	bin := buildCatalog(t, work)
	t.Logf("built the catalog in %v", time.Since(begin).Round(time.Millisecond))
	pg := startPostgres(t)
	warehouse := filepath.Join(work, "warehouse")
	reps := make([]*replica, replicas)
	for i := range reps {
		// The first replica migrates; the others start on the migrated schema.
		reps[i] = startReplica(t, i, bin, pg.url(), warehouse, work, i == 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	uuid, err := createTable(ctx, reps[0].addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("postgres and %d replicas up, table created at %v", replicas, time.Since(begin).Round(time.Millisecond))
	w := &workload{rec: newRecorder(), reps: reps, uuid: uuid,
		internals: []string{"127.0.0.1:" + strconv.Itoa(pg.port), pg.root, work, "SQLSTATE", "pgx", "postgres://", "failed to connect"}}
	w.setPhase("steady")
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { w.writer(ctx, i) })
	}
	for i := range readers {
		wg.Go(func() { w.reader(ctx, i) })
	}
	probes, faultErr := w.faults(pg)
	w.stop.Store(true)
	wg.Wait()
	if faultErr != nil {
		t.Fatal(faultErr)
	}

	t.Logf("workload done at %v", time.Since(begin).Round(time.Millisecond))
	final := w.finalReads(ctx, t)
	ops := w.rec.snapshot()
	logSummary(t, ops)
	checkOutageProbes(t, probes)
	checkNoLeaks(t, ops)
	checkAcknowledged(t, ops, final, nil)
	checkMetadataChain(t, final)
	checkLinearizable(t, ops, writerKeys(final.Metadata.Properties))
	checkPhasesExercised(t, ops, "steady", "replica-killed", "pg-recovered", "replica-back")
}

// workload drives the clients; phase names the fault stage, for reports.
type workload struct {
	rec   *recorder
	reps  []*replica
	uuid  string
	phase atomic.Value
	stop  atomic.Bool
	// internals are strings no error answer may contain: the database
	// port and URL scheme, server paths, driver words.
	internals []string
}

// leak returns the first internal string found in an error answer.
func (w *workload) leak(r response) string {
	if r.status == 0 || r.status == http.StatusOK {
		return ""
	}
	for _, s := range w.internals {
		if bytes.Contains(r.body, []byte(s)) {
			return fmt.Sprintf("%q in %.300s", s, r.body)
		}
	}
	return ""
}

func (w *workload) setPhase(p string) { w.phase.Store(p) }
func (w *workload) phaseName() string { return w.phase.Load().(string) }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// writer commits its own changes one after another, each retried a
// bounded number of times on the next replica until it is acknowledged
// (or the run stops).
// Every attempt sets a key of its own (attemptKey), so that the final
// properties tell which attempts landed: a refused attempt that landed is
// caught even when a retry of the same change was acknowledged.
func (w *workload) writer(ctx context.Context, id int) {
	for j := 0; j < opsPerWriter && !w.stop.Load() && ctx.Err() == nil; j++ {
		for attempt := 0; attempt < maxAttempts && !w.stop.Load(); attempt++ {
			k := attemptKey(id, j, attempt)
			rep := w.reps[(id+attempt)%len(w.reps)]
			o := op{client: id, write: true, key: k, replica: rep.idx, phase: w.phaseName(), call: w.rec.now()}
			r := call(ctx, http.MethodPost, rep.addr, tablePath(), commitBody(w.uuid, k))
			o.ret = w.rec.now()
			o.status, o.errType, o.message, o.out, o.leak = r.status, r.errType, r.message, commitOutcome(r), w.leak(r)
			w.rec.add(o)
			if o.out == applied {
				break
			}
			sleep(ctx, time.Duration(50*(attempt+1)+rand.IntN(50))*time.Millisecond)
		}
		sleep(ctx, time.Duration(150+rand.IntN(100))*time.Millisecond)
	}
}

// attemptKey is the key that attempt of writer id's j-th change sets.
func attemptKey(id, j, attempt int) int { return (id*opsPerWriter+j)*maxAttempts + attempt }

// reader loads the table round-robin over the replicas until stopped.
func (w *workload) reader(ctx context.Context, id int) {
	for n := 0; !w.stop.Load() && ctx.Err() == nil && n < 2000; n++ {
		rep := w.reps[(id+n)%len(w.reps)]
		o := w.read(ctx, writers+id, rep)
		w.rec.add(o)
		sleep(ctx, time.Duration(40+rand.IntN(40))*time.Millisecond)
	}
}

// read is one recorded loadTable.
func (w *workload) read(ctx context.Context, client int, rep *replica) op {
	o := op{client: client, replica: rep.idx, phase: w.phaseName(), call: w.rec.now()}
	r := call(ctx, http.MethodGet, rep.addr, tablePath(), nil)
	o.ret = w.rec.now()
	o.status, o.errType, o.leak = r.status, r.errType, w.leak(r)
	if r.status == http.StatusOK {
		var l loaded
		if err := json.Unmarshal(r.body, &l); err != nil {
			o.errType = "undecodable loadTable answer: " + err.Error()
			return o
		}
		o.readOK, o.seen, o.metaLoc, o.metadata = true, writerKeys(l.Metadata.Properties), l.MetadataLocation, r.body
	}
	return o
}

// faults is the timeline: kill -9 a replica, later stop Postgres
// immediately, probe the live replicas while it is down, start it again
// (WAL recovery), and bring the killed replica back. It returns the probe
// answers.
func (w *workload) faults(pg *postgres) ([]response, error) {
	time.Sleep(2500 * time.Millisecond)
	w.setPhase("replica-killed")
	w.reps[1].kill()
	time.Sleep(2500 * time.Millisecond)

	w.setPhase("pg-down")
	if err := pg.stopImmediate(); err != nil {
		return nil, err
	}
	probes := w.probe(1500*time.Millisecond, w.reps[0], w.reps[2])
	if err := pg.start(); err != nil {
		return probes, fmt.Errorf("restart postgres: %w", err)
	}
	w.setPhase("pg-recovered")
	time.Sleep(2 * time.Second)

	if err := w.reps[1].start(); err != nil {
		return probes, fmt.Errorf("restart replica 1: %w", err)
	}
	w.setPhase("replica-back")
	time.Sleep(2500 * time.Millisecond)
	return probes, nil
}

// probe loads the table from the given replicas every 100 ms for d, while
// the database is out of reach, and returns the answers; they are recorded
// in phase "outage-probe" (checked for leaks, not for linearizability).
func (w *workload) probe(d time.Duration, reps ...*replica) []response {
	var probes []response
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Second)
	defer cancel()
	for start := time.Now(); time.Since(start) < d; time.Sleep(100 * time.Millisecond) {
		for _, rep := range reps {
			r := call(ctx, http.MethodGet, rep.addr, tablePath(), nil)
			probes = append(probes, r)
			w.rec.add(op{client: -1, status: r.status, errType: r.errType, leak: w.leak(r), phase: "outage-probe"})
		}
	}
	return probes
}

// finalReads loads the table from every replica after the clients have
// stopped; they are part of the history and must agree.
func (w *workload) finalReads(ctx context.Context, t *testing.T) loaded {
	t.Helper()
	w.setPhase("final")
	var first loaded
	for i, rep := range w.reps {
		o := w.read(ctx, writers+readers+i, rep)
		w.rec.add(o)
		if !o.readOK {
			t.Fatalf("final loadTable on replica %d: %d %s", i, o.status, o.errType)
		}
		var l loaded
		if err := json.Unmarshal(o.metadata, &l); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = l
		} else if l.MetadataLocation != first.MetadataLocation {
			t.Errorf("replicas disagree after the run: replica 0 at %s, replica %d at %s", first.MetadataLocation, i, l.MetadataLocation)
		}
	}
	return first
}
