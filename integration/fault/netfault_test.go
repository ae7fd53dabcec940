package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// linkFault is one fault on the catalog↔Postgres link: toxics added for
// a while, then removed.
type linkFault struct {
	name   string
	toxics []string // toxiproxy toxic JSON
	hold   time.Duration
}

// The faults of the regression: the three shapes that answered 503 for a
// swap that had landed (a stall, a blackhole of answers, a slow link), at
// a scale that fits make check: the replica's swap bound is 2 s instead of
// the default 10 s, and each fault lasts a few bound-lengths.
var linkFaults = []linkFault{
	{name: "stall: answers 3 s late", hold: 6 * time.Second, toxics: []string{
		`{"name":"late","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":3000}}`}},
	{name: "blackhole: answers dropped", hold: 6 * time.Second, toxics: []string{
		`{"name":"hole","type":"timeout","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`}},
	{name: "slow link: 2 KB/s requests, answers 1.5 s late", hold: 6 * time.Second, toxics: []string{
		`{"name":"narrow","type":"bandwidth","stream":"upstream","toxicity":1,"attributes":{"rate":2}}`,
		`{"name":"late","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":1500}}`}},
}

// attempt is one commit a writer sent and what it was told.
type linkAttempt struct {
	key     int
	phase   string
	status  int
	errType string
	out     outcome
	leak    string // an internal string the error answer showed
	message string // the error answer's message
}

// TestCommitOutcomesUnderPostgresLinkFaults puts Postgres behind
// toxiproxy (in process, from its Go module), runs 8 writers committing
// set-properties with assert-table-uuid through one replica, and applies
// each link fault in turn. It checks the outcome contract where it broke
// before: no commit answered 409 or 503 ("nothing committed") landed, no
// acknowledged commit is lost, the table's pointer and every metadata file
// of its log exist, and every request left its audit row. It prints a
// table of figures per fault.
func TestCommitOutcomesUnderPostgresLinkFaults(t *testing.T) {
	requireFault(t)
	work := t.TempDir()
	bin := buildCatalog(t, work)
	pg := startPostgres(t)
	proxy := startToxiproxy(t, "postgres", "127.0.0.1:"+strconv.Itoa(pg.port))
	dbURL := fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&connect_timeout=5", proxy.Listen)
	warehouse := filepath.Join(work, "warehouse")
	rep := startReplica(t, 0, bin, dbURL, warehouse, work, true, "--db-swap-timeout", "2s")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	uuid, err := createTable(ctx, rep.addr)
	if err != nil {
		t.Fatal(err)
	}

	run := &linkRun{rep: rep, uuid: uuid, client: &http.Client{Timeout: 90 * time.Second},
		title: "commit outcomes under Postgres link faults"}
	run.setPhase("steady")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { run.writer(ctx, i) })
	}
	for _, f := range linkFaults {
		run.faults = append(run.faults, f.name)
		time.Sleep(2 * time.Second)
		run.setPhase(f.name)
		if err := applyFault(proxy, f, run.hold); err != nil {
			t.Fatal(err)
		}
		run.setPhase(f.name + " (recovering)")
		time.Sleep(3 * time.Second)
	}
	run.setPhase("steady after")
	time.Sleep(2 * time.Second)
	run.stopped.Store(true)
	wg.Wait()

	final := call(ctx, http.MethodGet, rep.addr, tablePath(), nil)
	if final.status != http.StatusOK {
		t.Fatalf("the table does not load after the faults: %d %s %.300s", final.status, final.errType, final.body)
	}
	var l loaded
	if err := json.Unmarshal(final.body, &l); err != nil {
		t.Fatal(err)
	}
	missing := missingMetadataFiles(l)
	// A graceful stop flushes the audit queue; then count its rows.
	rep.proc.signal(syscall.SIGTERM, 60*time.Second)
	auditRows, err := countCommitAudits(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	run.report(t, l, missing, auditRows)
}

// startToxiproxy runs a toxiproxy proxy to upstream on a free loopback
// port; cleanup stops it.
func startToxiproxy(t *testing.T, name, upstream string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("start toxiproxy: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

// applyFault adds the fault's toxics, holds them for the fault's hold time
// (hold, e.g. linkRun.hold, may wait longer) and removes them.
func applyFault(p *toxiproxy.Proxy, f linkFault, hold func(time.Duration)) error {
	var names []string
	for _, js := range f.toxics {
		tw, err := p.Toxics.AddToxicJson(strings.NewReader(js))
		if err != nil {
			return fmt.Errorf("%s: add toxic: %w", f.name, err)
		}
		names = append(names, tw.Name)
	}
	hold(f.hold)
	for _, n := range names {
		if err := p.Toxics.RemoveToxic(context.Background(), n); err != nil {
			return fmt.Errorf("%s: remove toxic %s: %w", f.name, n, err)
		}
	}
	return nil
}

// linkRun is the writers' shared state.
type linkRun struct {
	rep    *replica
	uuid   string
	client *http.Client
	title  string   // heads the figures table
	faults []string // phases in which commits must have been sent
	// pause bounds the wait between two attempts of a writer (default
	// 20-60 ms).
	pause [2]time.Duration
	// internals are strings no error answer may contain (addresses,
	// paths, secrets, driver or SDK words).
	internals []string
	mu        sync.Mutex
	phase     string
	started   map[string]int  // attempts begun per phase
	refusing  map[string]bool // phases whose fault must refuse some commit (503)
	tries     []linkAttempt
	stopped   atomic.Bool
}

func (r *linkRun) setPhase(p string) { r.mu.Lock(); r.phase = p; r.mu.Unlock() }

// hold waits d, then on (at most 4×d more) until the current phase has
// been met: a writer began an attempt in it and, for a phase in refusing,
// one of its attempts was answered 503. On a loaded machine every writer
// can still be waiting on an answer from the phase before, and a fault no
// commit met proves nothing; the checks afterwards still fail a phase
// that was not met by then.
func (r *linkRun) hold(d time.Duration) {
	time.Sleep(d)
	for end := time.Now().Add(4 * d); time.Now().Before(end) && !r.met(); time.Sleep(50 * time.Millisecond) {
	}
}

// met reports whether the current phase has been met (see hold).
func (r *linkRun) met() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started[r.phase] == 0 {
		return false
	}
	if !r.refusing[r.phase] {
		return true
	}
	for _, a := range r.tries {
		if a.phase == r.phase && a.status == http.StatusServiceUnavailable {
			return true
		}
	}
	return false
}

// writer commits a fresh key per attempt (so that each attempt's landing
// can be told from the final properties) until the run stops.
func (r *linkRun) writer(ctx context.Context, id int) {
	for j := 0; !r.stopped.Load() && ctx.Err() == nil; j++ {
		k := id*1000 + j
		r.mu.Lock()
		phase := r.phase
		if r.started == nil {
			r.started = map[string]int{}
		}
		r.started[phase]++
		r.mu.Unlock()
		resp := callWith(ctx, r.client, http.MethodPost, r.rep.addr, tablePath(), commitBody(r.uuid, k))
		a := linkAttempt{key: k, phase: phase, status: resp.status, errType: resp.errType, out: commitOutcome(resp)}
		if resp.status == 0 {
			a.errType = shorten(resp.errType)
		} else if resp.status != http.StatusOK {
			var e struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(resp.body, &e)
			a.message = e.Error.Message
			for _, s := range r.internals {
				if strings.Contains(string(resp.body), s) {
					a.leak = fmt.Sprintf("%q in %.300s", s, resp.body)
					break
				}
			}
		}
		r.mu.Lock()
		r.tries = append(r.tries, a)
		r.mu.Unlock()
		lo, hi := r.pause[0], r.pause[1]
		if hi <= lo {
			lo, hi = 20*time.Millisecond, 60*time.Millisecond
		}
		sleep(ctx, lo+rand.N(hi-lo))
	}
}

// missingMetadataFiles lists the table's current metadata file and the
// files of its metadata log that do not exist on disk.
func missingMetadataFiles(l loaded) []string {
	var out []string
	files := []string{l.MetadataLocation}
	for _, e := range l.Metadata.MetadataLog {
		files = append(files, e.File)
	}
	for _, f := range files {
		if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
			out = append(out, filepath.Base(f))
		}
	}
	return out
}

// countCommitAudits counts the audit rows of table commits, straight from
// Postgres (not through the proxy).
func countCommitAudits(ctx context.Context, pg *postgres) (int, error) {
	conn, err := pgx.Connect(ctx, pg.url())
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE action = $1`,
		"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}").Scan(&n)
	return n, err
}

// report prints the figures per phase and fails on any broken promise.
// auditRows < 0: the audit rows were not counted.
func (r *linkRun) report(t *testing.T, final loaded, missing []string, auditRows int) {
	t.Helper()
	landed := writerKeys(final.Metadata.Properties)
	type figures struct {
		attempts, acked, lost, unavailable, unknown, wrong int
		statuses                                           map[string]int
	}
	per := map[string]*figures{}
	var order []string
	var wrong []string
	for _, a := range r.tries {
		f := per[a.phase]
		if f == nil {
			f = &figures{statuses: map[string]int{}}
			per[a.phase] = f
			order = append(order, a.phase)
		}
		f.attempts++
		f.statuses[fmt.Sprintf("%d %s", a.status, a.errType)]++
		in := landed.has(a.key)
		switch {
		case a.out == applied:
			f.acked++
			if !in {
				f.lost++
				wrong = append(wrong, fmt.Sprintf("key %d acknowledged in %q but lost", a.key, a.phase))
			}
		case a.out == notApplied && in:
			f.wrong++
			wrong = append(wrong, fmt.Sprintf("key %d answered %d %s (nothing committed) in %q but landed", a.key, a.status, a.errType, a.phase))
		}
		if a.status == http.StatusServiceUnavailable {
			f.unavailable++
		}
		if a.out == unknown {
			f.unknown++
		}
		if a.leak != "" {
			wrong = append(wrong, fmt.Sprintf("key %d: the %d answer in %q exposes internals: %s", a.key, a.status, a.phase, a.leak))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-58s %8s %6s %4s %4s %8s %6s  statuses\n", "phase", "attempts", "acked", "lost", "503", "unknown", "wrong")
	for _, p := range order {
		f := per[p]
		var st []string
		for k, n := range f.statuses {
			st = append(st, fmt.Sprintf("%s ×%d", k, n))
		}
		sort.Strings(st)
		fmt.Fprintf(&b, "%-58s %8d %6d %4d %4d %8d %6d  %s\n", p, f.attempts, f.acked, f.lost, f.unavailable, f.unknown, f.wrong, strings.Join(st, ", "))
	}
	fmt.Fprintf(&b, "tables pointing at a missing metadata file: %d; metadata files of the log missing: %v\n", boolInt(len(missing) > 0), missing)
	if auditRows >= 0 {
		fmt.Fprintf(&b, "audit rows of commits: %d for %d attempts\n", auditRows, len(r.tries))
	}
	t.Logf("%s:\n%s", r.title, b.String())
	for _, w := range wrong {
		t.Error(w)
	}
	if len(missing) > 0 {
		t.Errorf("metadata files named by the table are missing: %v", missing)
	}
	if auditRows >= 0 && auditRows != len(r.tries) {
		t.Errorf("audit rows lost: %d rows for %d commit requests", auditRows, len(r.tries))
	}
	for _, p := range r.faults {
		if per[p] == nil || per[p].attempts == 0 {
			t.Errorf("no commit was sent during %q", p)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
