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

// checkAcknowledged: every acknowledged key is in the final metadata, and
// every key there came from a commit that may have landed.
func checkAcknowledged(t *testing.T, ops []op, final loaded) {
	t.Helper()
	have := writerKeys(final.Metadata.Properties)
	var lost []string
	mayLand := map[int]bool{}
	acked := 0
	for _, o := range ops {
		if !o.write || o.out == notApplied {
			continue
		}
		mayLand[o.key] = true
		if o.out == applied {
			acked++
			if !have.has(o.key) {
				lost = append(lost, fmt.Sprintf("%s (acknowledged by replica %d in phase %s)", keyName(o.key), o.replica, o.phase))
			}
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d acknowledged commits lost: %s", len(lost), strings.Join(lost, ", "))
	}
	for _, k := range have.keys() {
		if !mayLand[k] {
			t.Errorf("%s is in the final metadata but every commit of it was refused (nothing committed)", keyName(k))
		}
	}
	t.Logf("%d commits acknowledged, %d keys in the final metadata", acked, have.len())
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
// the visualization next to the test's temp files and names it.
func checkLinearizable(t *testing.T, ops []op, final keySet) {
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
}

// checkPhasesExercised: the run must have committed before the faults and
// after recovery, or the other checks would prove little.
func checkPhasesExercised(t *testing.T, ops []op) {
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
	for _, p := range []string{"steady", "replica-killed", "pg-recovered", "replica-back"} {
		if acked[p] == 0 {
			t.Errorf("no commit was acknowledged in phase %s", p)
		}
	}
	t.Logf("%d commits ended with an unknown outcome (modelled as maybe applied)", unknowns)
}
