package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// reportsDouble is the stored-reports route of a catalog, played by the
// test: GET /management/v1/warehouses/wh/namespaces/ns/tables/{t}/reports
// with the contract's paging (page-size, page-token, next-page-token) and
// type filter. Table "busy" has busyScans scan and busyCommits commit
// reports, "quiet" none, "denied" answers 403 and "off" 404 (a catalog
// with reports off). Every other path goes to the real catalog.
//
// REWIRE AT MERGE: this double stands in for the route being built on
// the stored-reports branch (issue 52 part 2). Once it is merged, post
// the reports through POST …/metrics to the real catalog and read them
// back from it; keep "denied" (a reader without the grant) and drop "off"
// unless reports can be switched off per warehouse.
type reportsDouble struct {
	now   time.Time
	mu    sync.Mutex
	calls map[string][]string // table/type -> page-size:page-token asked
}

const (
	busyScans   = 1300
	busyCommits = 40
)

// scanMs, commitMs and friends are the values report i carries; the test
// expects the page to show them.
func scanMs(i int) float64     { return 20 + float64(i%37)*3 }
func scanFiles(i int) int      { return 100 - i%50 }
func scanSkipped(i int) int    { return (i % 50) * 2 }
func commitMs(i int) float64   { return 500 + float64(i)*25 }
func commitAttempts(i int) int { return 1 + i%3 }
func commitAdded(i int) int    { return 1 + i%5 }

// report i of a kind, newest first: received i minutes before now. Even
// reports carry their durations as ISO-8601 strings (what Java's reporter
// sends), odd ones as numbers in their time unit.
func (d *reportsDouble) report(kind string, i int) map[string]any {
	timer := func(ms float64) map[string]any {
		if i%2 == 0 {
			return map[string]any{"count": 1, "time-unit": "nanoseconds", "total-duration": fmt.Sprintf("PT%.3fS", ms/1000)}
		}
		return map[string]any{"count": 1, "time-unit": "nanoseconds", "total-duration": int64(ms * 1e6)}
	}
	ctr := func(v int) map[string]any { return map[string]any{"unit": "count", "value": v} }
	snap := 5000 + i
	var body map[string]any
	if kind == "scan-report" {
		body = map[string]any{"table-name": "ns.busy", "snapshot-id": snap, "schema-id": 0, "projected-field-ids": []int{1}, "projected-field-names": []string{"id"},
			"filter": true, "metrics": map[string]any{"total-planning-duration": timer(scanMs(i)), "result-data-files": ctr(scanFiles(i)),
				"skipped-data-files": ctr(scanSkipped(i)), "result-delete-files": ctr(i % 3), "scanned-data-manifests": ctr(2), "skipped-data-manifests": ctr(1),
				"total-data-manifests": ctr(3), "total-file-size-in-bytes": map[string]any{"unit": "bytes", "value": scanFiles(i) << 20}}}
	} else {
		body = map[string]any{"table-name": "ns.busy", "snapshot-id": snap, "sequence-number": snap, "operation": "append",
			"metrics": map[string]any{"total-duration": timer(commitMs(i)), "attempts": ctr(commitAttempts(i)), "added-data-files": ctr(commitAdded(i)),
				"removed-data-files": ctr(i % 2), "total-data-files": ctr(100), "added-records": ctr(1000 * i), "total-records": ctr(100000)}}
	}
	return map[string]any{"id": fmt.Sprintf("%s-%d", kind, i), "report-type": kind, "snapshot-id": snap,
		"received-at-ms": d.now.Add(-time.Duration(i) * time.Minute).UnixMilli(), "report": body}
}

func (d *reportsDouble) serve(w http.ResponseWriter, r *http.Request, table string) {
	w.Header().Set("Content-Type", "application/json")
	fail := func(code int, typ, msg string) {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
	}
	switch table {
	case "denied":
		fail(403, "ForbiddenException", "Forbidden: console-test lacks privilege table-read-metadata on ns.denied")
		return
	case "off":
		fail(404, "NotFoundException", "No route")
		return
	}
	q := r.URL.Query()
	kind := q.Get("type")
	size, _ := strconv.Atoi(q.Get("page-size"))
	from, _ := strconv.Atoi(q.Get("page-token"))
	d.mu.Lock()
	d.calls[table+"/"+kind] = append(d.calls[table+"/"+kind], q.Get("page-size")+":"+q.Get("page-token"))
	d.mu.Unlock()
	total := 0
	if table == "busy" {
		total = map[string]int{"scan-report": busyScans, "commit-report": busyCommits}[kind]
	}
	if size <= 0 || size > 1000 {
		size = 100
	}
	out := map[string]any{"reports": []any{}, "next-page-token": nil}
	var list []any
	for i := from; i < min(total, from+size); i++ {
		list = append(list, d.report(kind, i))
	}
	if list != nil {
		out["reports"] = list
	}
	if from+size < total {
		out["next-page-token"] = strconv.Itoa(from + size)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// reportsFront serves the catalog at catalogURL with the reports route
// answered by d.
func reportsFront(t *testing.T, catalogURL string, d *reportsDouble) string {
	target, err := url.Parse(catalogURL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	const prefix = "/management/v1/warehouses/wh/namespaces/ns/tables/"
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, prefix); ok && r.Method == http.MethodGet && strings.HasSuffix(rest, "/reports") {
			d.serve(w, r, strings.TrimSuffix(rest, "/reports"))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// drawnPixels counts the pixels of the canvases under sel within 40 of
// the colour hex in each channel: a series drawn in that colour leaves
// some, an empty chart none.
func drawnPixels(t *testing.T, br *browser, sel, hex string) int {
	return eval[int](t, br, fmt.Sprintf(`(() => {
		const c = %q, want = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
		let n = 0;
		for (const cv of document.querySelectorAll(%q + ' canvas')) {
			const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
			for (let i = 0; i < d.length; i += 4) {
				if (d[i + 3] > 200 && want.every((v, k) => Math.abs(d[i + k] - v) < 40)) n++;
			}
		}
		return n;
	})()`, hex, sel))
}

// TestConsoleReportsWithDouble (REWIRE AT MERGE, see reportsDouble): the
// table page reads a table's stored reports a page at a time up to its
// bound, draws scans and commits over time and lists the newest with the
// values the reports carry (ISO-8601 and numeric durations alike); it
// says so plainly when there are none, when the caller may not read them
// (403) and when the catalog keeps none (404), and the rest of the page
// works in each case.
func TestConsoleReportsWithDouble(t *testing.T) {
	chromiumPath(t)
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	for _, name := range []string{"busy", "quiet", "denied", "off"} {
		require.Equal(t, 200, b.createTable(t, "ns", name, nil).status)
	}
	d := &reportsDouble{now: time.Now(), calls: map[string][]string{}}
	shots := screenshotDir(t, "reports")
	br := newBrowser(t, reportsFront(t, b.url, d), shots)

	br.open(t, "#/w/wh/n/ns/t/busy", "#reports-summary")
	br.waitFor(t, "#scan-charts canvas")
	br.waitFor(t, "#commit-charts canvas")
	sum := eval[map[string]string](t, br, `({...document.getElementById('reports-summary').dataset})`)
	require.Equal(t, map[string]string{"scans": "1000", "commits": fmt.Sprint(busyCommits), "capped": "true"}, sum,
		"1,300 scans stop at the bound of 1,000; the 40 commits are all read")
	d.mu.Lock()
	require.Equal(t, []string{"500:", "500:500"}, d.calls["busy/scan-report"], "two pages of scans, then the bound")
	require.Equal(t, []string{"500:"}, d.calls["busy/commit-report"])
	d.mu.Unlock()
	require.Contains(t, br.text(t, "#reports-summary"), "only the newest 1000")

	type scanRow struct{ Ms, Files, Skipped, Bytes string }
	scans := eval[[]scanRow](t, br, `[...document.querySelectorAll('#scan-table tr.scan-row')].map(r => ({
		Ms: r.children[2].dataset.ms, Files: r.children[3].textContent, Skipped: r.children[4].textContent, Bytes: r.children[6].dataset.bytes}))`)
	require.Len(t, scans, 10, "the newest ten scans are listed")
	for i, r := range scans {
		ms, err := strconv.ParseFloat(r.Ms, 64)
		require.NoError(t, err)
		require.InDelta(t, scanMs(i), ms, 1e-6, "scan %d planning duration", i)
		require.Equal(t, scanRow{r.Ms, fmt.Sprint(scanFiles(i)), fmt.Sprint(scanSkipped(i)), fmt.Sprint(scanFiles(i) << 20)}, r, "scan %d", i)
	}
	type commitRow struct{ Ms, Attempts, Added string }
	commits := eval[[]commitRow](t, br, `[...document.querySelectorAll('#commit-table tr.commit-row')].map(r => ({
		Ms: r.children[3].dataset.ms, Attempts: r.children[4].textContent, Added: r.children[5].textContent}))`)
	require.Len(t, commits, 10)
	for i, r := range commits {
		ms, err := strconv.ParseFloat(r.Ms, 64)
		require.NoError(t, err)
		require.InDelta(t, commitMs(i), ms, 1e-6, "commit %d duration", i)
		require.Equal(t, commitRow{r.Ms, fmt.Sprint(commitAttempts(i)), fmt.Sprint(commitAdded(i))}, r, "commit %d", i)
	}
	require.Equal(t, 3, eval[int](t, br, `document.querySelectorAll('#scan-charts canvas').length`), "planning, files, bytes")
	require.Equal(t, 3, eval[int](t, br, `document.querySelectorAll('#commit-charts canvas').length`), "duration, attempts, files")
	for sel, colour := range map[string]string{"#scan-charts": "#8250df", "#commit-charts": "#cf222e"} {
		require.Greater(t, drawnPixels(t, br, sel, colour), 50, "%s draws its series", sel)
	}
	require.Zero(t, drawnPixels(t, br, "#scan-charts", "#cf222e"), "the pixel count tells the colours apart (red is the commits' attempts)")
	br.shot(t, "01-reports")

	br.open(t, "#/w/wh/n/ns/t/quiet", "#reports-empty")
	require.Contains(t, br.text(t, "#reports-empty"), "No scan or commit reports")
	br.shot(t, "02-reports-empty")

	br.open(t, "#/w/wh/n/ns/t/denied", "#reports-denied")
	require.Contains(t, br.text(t, "#reports-denied"), "403")
	br.waitFor(t, "#snapshots-box[data-render-ms]")
	br.waitFor(t, "#eligible")
	br.shot(t, "03-reports-denied")

	br.open(t, "#/w/wh/n/ns/t/off", "#reports-off")
	require.Contains(t, br.text(t, "#reports-off"), "404")
	br.waitFor(t, "#eligible")
	br.shot(t, "04-reports-off")

	// At a phone's width the charts take their box's width.
	require.NoError(t, chromedp.Do(br.ctx, chromedp.EmulateViewport(390, 844)))
	br.open(t, "#/w/wh/n/ns/t/busy", "#commit-charts canvas")
	overflow := eval[bool](t, br, `document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`)
	require.False(t, overflow, "the reports section scrolls sideways at 390px")
	br.shot(t, "05-reports-narrow")

	names, _ := filepath.Glob(filepath.Join(shots, "*.png"))
	require.Len(t, names, 5)
	for _, n := range names {
		st, err := os.Stat(n)
		require.NoError(t, err)
		require.Greater(t, st.Size(), int64(10_000), "%s is a page, not a blank", n)
	}
}
