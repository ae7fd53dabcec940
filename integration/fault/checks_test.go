package fault

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// logSummary reports how many requests of each kind ended how, per phase.
func logSummary(t *testing.T, ops []op) {
	t.Helper()
	counts := map[string]int{}
	for _, o := range ops {
		what := "read " + http.StatusText(o.status)
		if o.status == 0 {
			what = "read failed"
		}
		if o.write {
			what = "commit " + o.out.String()
		}
		if o.status != http.StatusOK {
			what += fmt.Sprintf(" (%d %s)", o.status, shorten(o.errType))
		}
		counts[o.phase+": "+what]++
	}
	lines := make([]string, 0, len(counts))
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("%6d  %s", n, k))
	}
	sort.Strings(lines)
	t.Logf("request outcomes by phase:\n%s", strings.Join(lines, "\n"))
}

// shorten keeps transport error texts (which name ports) short and stable.
func shorten(s string) string {
	for _, k := range []string{"connection refused", "connection reset", "EOF", "timeout", "Client.Timeout"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}

// checkOutageProbes: while Postgres is down, loadTable must answer 503
// ServiceUnavailableException (retry later), not 500.
func checkOutageProbes(t *testing.T, probes []response) {
	t.Helper()
	if len(probes) == 0 {
		t.Error("no loadTable was sent while Postgres was down")
	}
	bad := map[string]int{}
	for _, p := range probes {
		if p.status != http.StatusServiceUnavailable || p.errType != "ServiceUnavailableException" {
			bad[fmt.Sprintf("%d %s", p.status, shorten(p.errType))]++
		}
	}
	if len(bad) > 0 {
		t.Errorf("loadTable during the Postgres outage: want 503 ServiceUnavailableException, got %v (of %d probes)", bad, len(probes))
	}
}

// checkNoLeaks: no error answer names the database, a server path or the
// driver.
func checkNoLeaks(t *testing.T, ops []op) {
	t.Helper()
	leaks := map[string]int{}
	for _, o := range ops {
		if o.leak != "" {
			leaks[fmt.Sprintf("%d %s: %s", o.status, o.errType, o.leak)]++
		}
	}
	if len(leaks) > 0 {
		for l, n := range leaks {
			t.Errorf("%d error answers expose internals: %s", n, l)
		}
	}
}

// commitTally is what the commit attempts of a history were told, against
// the keys of the final metadata.
type commitTally struct {
	attempts, acked, unknown, unavailable int
	// lost are acknowledged attempts whose key is not in the final
	// metadata; wrong are attempts answered "nothing committed" (409, 503,
	// another 500, a refused connection) whose key is.
	lost, wrong []op
	statuses    map[string]int // "status error-type" -> attempts
}

func tallyCommits(ops []op, final keySet) commitTally {
	c := commitTally{statuses: map[string]int{}}
	for _, o := range ops {
		if !o.write {
			continue
		}
		c.attempts++
		c.statuses[statusKey(o)]++
		switch {
		case o.out == applied:
			c.acked++
			if !final.has(o.key) {
				c.lost = append(c.lost, o)
			}
		case o.out == unknown:
			c.unknown++
		case final.has(o.key):
			c.wrong = append(c.wrong, o)
		}
		if o.status == http.StatusServiceUnavailable {
			c.unavailable++
		}
	}
	return c
}

// statusKey names an answer for the statuses seen: the status, the error
// type, and for a 409 why (a race lost on every attempt, or a database
// error before COMMIT).
func statusKey(o op) string {
	k := strconv.Itoa(o.status)
	if o.errType != "" {
		k += " " + shorten(o.errType)
	}
	switch {
	case strings.Contains(o.message, "changed concurrently"):
		k += " (race lost on every attempt)"
	case strings.Contains(o.message, "database error"):
		k += " (database error)"
	}
	return k
}

// statusList is the statuses seen, "count× status type", most frequent first.
func (c commitTally) statusList() string {
	st := make([]string, 0, len(c.statuses))
	for k := range c.statuses {
		st = append(st, k)
	}
	sort.Slice(st, func(i, j int) bool {
		if c.statuses[st[i]] != c.statuses[st[j]] {
			return c.statuses[st[i]] > c.statuses[st[j]]
		}
		return st[i] < st[j]
	})
	for i, k := range st {
		st[i] = fmt.Sprintf("%d× %s", c.statuses[k], k)
	}
	return strings.Join(st, ", ")
}

func describeAttempt(o op) string {
	return fmt.Sprintf("%s (%d %s from replica %d in phase %s)", keyName(o.key), o.status, shorten(o.errType), o.replica, o.phase)
}

// checkAcknowledged: every acknowledged key is in the final metadata, and
// every key there came from a commit that may have landed. Keys in excused
// may be lost (a cause outside the catalog was shown, as an asynchronous
// standby's lag): their losses are reported, not failed. It returns the
// tally of the commits.
func checkAcknowledged(t *testing.T, ops []op, final loaded, excused keySet) commitTally {
	t.Helper()
	have := writerKeys(final.Metadata.Properties)
	c := tallyCommits(ops, have)
	var lost, excusedLost []string
	for _, o := range c.lost {
		if excused.has(o.key) {
			excusedLost = append(excusedLost, describeAttempt(o))
		} else {
			lost = append(lost, describeAttempt(o))
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d acknowledged commits lost: %s", len(lost), strings.Join(lost, ", "))
	}
	if len(excusedLost) > 0 {
		t.Logf("%d acknowledged commits lost for a known cause: %s", len(excusedLost), strings.Join(excusedLost, ", "))
	}
	for _, o := range c.wrong {
		t.Errorf("%s is in the final metadata but its commit was answered as not applied", describeAttempt(o))
	}
	sent := map[int]bool{}
	for _, o := range ops {
		if o.write {
			sent[o.key] = true
		}
	}
	for _, k := range have.keys() {
		if !sent[k] {
			t.Errorf("%s is in the final metadata but no commit set it", keyName(k))
		}
	}
	t.Logf("%d commits acknowledged, %d keys in the final metadata", c.acked, have.len())
	return c
}

// checkMetadataChain walks the final metadata log from the table's first
// metadata file: each version keeps every key of the one before and adds at
// most one (one set-properties per commit), so no commit was based on a
// stale version and none was lost on the way.
func checkMetadataChain(t *testing.T, final loaded) {
	t.Helper()
	files := make([]string, 0, len(final.Metadata.MetadataLog)+1)
	for _, e := range final.Metadata.MetadataLog {
		files = append(files, e.File)
	}
	files = append(files, final.MetadataLocation)
	if len(files) > maxVersions {
		t.Fatalf("metadata log truncated at %d versions; raise maxVersions", maxVersions)
	}
	seen := map[string]bool{}
	var prev keySet
	for i, f := range files {
		if seen[f] {
			t.Errorf("metadata log lists %s twice", filepath.Base(f))
		}
		seen[f] = true
		props, err := readMetadataProps(f)
		if err != nil {
			t.Errorf("metadata version %d: %v", i, err)
			return
		}
		cur := writerKeys(props)
		for _, k := range prev.keys() {
			if !cur.has(k) {
				t.Errorf("metadata version %d (%s) lost %s", i, filepath.Base(f), keyName(k))
			}
		}
		if n := cur.len() - prev.len(); n > 1 || (i == 0 && n != 0) {
			t.Errorf("metadata version %d (%s) added %d keys; one commit sets one key", i, filepath.Base(f), n)
		}
		prev = cur
	}
	if !prev.equal(writerKeys(final.Metadata.Properties)) {
		t.Error("the current metadata file differs from the loadTable answer")
	}
	t.Logf("metadata chain: %d versions, %d keys", len(files), prev.len())
}

// readMetadataProps reads the properties of a metadata file in the local
// warehouse.
func readMetadataProps(loc string) (map[string]string, error) {
	path, ok := strings.CutPrefix(loc, "file://")
	if !ok {
		return nil, fmt.Errorf("metadata location %s is not a local file", loc)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".gz.metadata.json") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var m struct {
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return m.Properties, nil
}

// checkLinearizable runs porcupine on the history; on a violation it writes
// the visualization next to the test's temp files and names it. It returns
// porcupine's verdict.
func checkLinearizable(t *testing.T, ops []op, final keySet) porcupine.CheckResult {
	t.Helper()
	h := porcupineHistory(ops, final)
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(setModel, h, 60*time.Second)
	t.Logf("porcupine: %s on %d operations in %v", res, len(h), time.Since(start).Round(time.Millisecond))
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Error("porcupine could not decide linearizability within 60 s")
	default:
		f, err := os.CreateTemp("", "catalog-fault-history-*.html")
		if err == nil {
			_ = porcupine.Visualize(setModel, info, f)
			f.Close()
			t.Errorf("history is not linearizable; visualization: %s", f.Name())
		} else {
			t.Errorf("history is not linearizable (no visualization: %v)", err)
		}
	}
	return res
}

// checkPhasesExercised: the run must have committed in each of the given
// phases (before the faults and after recovery), or the other checks would
// prove little.
func checkPhasesExercised(t *testing.T, ops []op, phases ...string) {
	t.Helper()
	acked := map[string]int{}
	unknowns := 0
	for _, o := range ops {
		if o.write && o.out == applied {
			acked[o.phase]++
		}
		if o.write && o.out == unknown {
			unknowns++
		}
	}
	for _, p := range phases {
		if acked[p] == 0 {
			t.Errorf("no commit was acknowledged in phase %s", p)
		}
	}
	t.Logf("%d commits ended with an unknown outcome (modelled as maybe applied)", unknowns)
}
