package server_test

import (
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

// reportsRecorder is a front for a real catalog that passes every
// request through and records the reports pages the console asks for
// (table/type -> page-size:page-token), so the test can see where the
// reading stops.
type reportsRecorder struct {
	mu    sync.Mutex
	calls map[string][]string
}

const (
	busyScans   = 1300
	busyCommits = 40
	// busySnapshots are ns.busy's snapshots, 5000 on: a report must name
	// one of its table's.
	busySnapshots = 4
)

// scanMs, commitMs and friends are the values report i carries; the test
// expects the page to show them.
func scanMs(i int) int64       { return 20 + int64(i%37)*3 }
func scanFiles(i int) int      { return 100 - i%50 }
func scanSkipped(i int) int    { return (i % 50) * 2 }
func commitMs(i int) int64     { return 500 + int64(i)*25 }
func commitAttempts(i int) int { return 1 + i%3 }
func commitAdded(i int) int    { return 1 + i%5 }

// reportBody is report i of a kind for table ns.busy, as an engine posts
// it to POST …/metrics. Even reports time in milliseconds, odd ones in
// nanoseconds (the spec lets a reporter choose its unit).
func reportBody(kind string, i int) map[string]any {
	timer := func(ms int64) map[string]any {
		if i%2 == 0 {
			return map[string]any{"count": 1, "time-unit": "milliseconds", "total-duration": ms}
		}
		return map[string]any{"count": 1, "time-unit": "nanoseconds", "total-duration": ms * 1_000_000}
	}
	ctr := func(v int) map[string]any { return map[string]any{"unit": "count", "value": v} }
	snap := 5000 + i%busySnapshots
	if kind == "scan-report" {
		return map[string]any{"report-type": kind, "table-name": "ns.busy", "snapshot-id": snap, "schema-id": 0,
			"projected-field-ids": []int{1}, "projected-field-names": []string{"id"}, "filter": true,
			"metrics": map[string]any{"total-planning-duration": timer(scanMs(i)), "result-data-files": ctr(scanFiles(i)),
				"skipped-data-files": ctr(scanSkipped(i)), "result-delete-files": ctr(i % 3), "scanned-data-manifests": ctr(2),
				"skipped-data-manifests": ctr(1), "total-data-manifests": ctr(3),
				"total-file-size-in-bytes": map[string]any{"unit": "bytes", "value": scanFiles(i) << 20}}}
	}
	return map[string]any{"report-type": kind, "table-name": "ns.busy", "snapshot-id": snap, "sequence-number": snap,
		"operation": "append", "metrics": map[string]any{"total-duration": timer(commitMs(i)), "attempts": ctr(commitAttempts(i)),
			"added-data-files": ctr(commitAdded(i)), "removed-data-files": ctr(i % 2), "total-data-files": ctr(100),
			"added-records": ctr(1000 * i), "total-records": ctr(100000)}}
}

// postReports sends n reports of kind for ns.busy to the real catalog,
// oldest first, so that report 0 is the newest.
func postReports(t *testing.T, b *bundle, kind string, n int) {
	t.Helper()
	for i := n - 1; i >= 0; i-- {
		r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/busy/metrics", reportBody(kind, i))
		require.Equal(t, 204, r.status, "%s", r.body)
	}
}

// reportsFront serves the catalog at catalogURL through rec.
func reportsFront(t *testing.T, catalogURL string, rec *reportsRecorder) string {
	target, err := url.Parse(catalogURL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	const prefix = "/management/v1/warehouses/wh/namespaces/ns/tables/"
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, prefix); ok && r.Method == http.MethodGet && strings.HasSuffix(rest, "/reports") {
			q := r.URL.Query()
			key := strings.TrimSuffix(rest, "/reports") + "/" + q.Get("type")
			rec.mu.Lock()
			rec.calls[key] = append(rec.calls[key], q.Get("page-size")+":"+q.Get("page-token"))
			rec.mu.Unlock()
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

// TestConsoleReports: the table page reads a table's stored reports (posted
// to the real catalog through POST …/metrics) a page at a time up to its
// bound, draws scans and commits over time and lists the newest with the
// values the reports carry, whatever time unit they were sent in; it says
// so plainly when there are none and when the catalog keeps none (404),
// and the rest of the page works in each case. (The console's 403 state is
// not reached here: the route authorizes as loadTable does, so a caller
// whose table page loaded may read its reports.)
func TestConsoleReports(t *testing.T) {
	chromiumPath(t)
	b := setupReports(t, "sqlite", false, time.Hour)
	b.createNamespace(t, "ns")
	for _, name := range []string{"busy", "quiet"} {
		require.Equal(t, 200, b.createTable(t, "ns", name, nil).status)
	}
	var snaps []int64
	for i := range busySnapshots {
		snaps = append(snaps, 5000+int64(i))
	}
	commitSnapshots(t, b, "wh", "ns", "busy", snaps)
	postReports(t, b, "scan-report", busyScans)
	postReports(t, b, "commit-report", busyCommits)
	rec := &reportsRecorder{calls: map[string][]string{}}
	shots := screenshotDir(t, "reports")
	br := newBrowser(t, reportsFront(t, b.url, rec), shots)

	br.open(t, "#/w/wh/n/ns/t/busy", "#reports-summary")
	br.waitFor(t, "#scan-charts canvas")
	br.waitFor(t, "#commit-charts canvas")
	sum := eval[map[string]string](t, br, `({...document.getElementById('reports-summary').dataset})`)
	require.Equal(t, map[string]string{"scans": "1000", "commits": fmt.Sprint(busyCommits), "capped": "true"}, sum,
		"1,300 scans stop at the bound of 1,000; the 40 commits are all read")
	rec.mu.Lock()
	scanPages := rec.calls["busy/scan-report"]
	require.Len(t, scanPages, 2, "two pages of scans, then the bound: %v", scanPages)
	require.Equal(t, "500:", scanPages[0])
	require.Regexp(t, `^500:.+`, scanPages[1], "the second page follows the first's next-page-token")
	require.Equal(t, []string{"500:"}, rec.calls["busy/commit-report"])
	rec.mu.Unlock()
	require.Contains(t, br.text(t, "#reports-summary"), "only the newest 1000")

	type scanRow struct{ Ms, Files, Skipped, Bytes string }
	scans := eval[[]scanRow](t, br, `[...document.querySelectorAll('#scan-table tr.scan-row')].map(r => ({
		Ms: r.children[2].dataset.ms, Files: r.children[3].textContent, Skipped: r.children[4].textContent, Bytes: r.children[6].dataset.bytes}))`)
	require.Len(t, scans, 10, "the newest ten scans are listed")
	for i, r := range scans {
		ms, err := strconv.ParseFloat(r.Ms, 64)
		require.NoError(t, err)
		require.InDelta(t, float64(scanMs(i)), ms, 1e-6, "scan %d planning duration", i)
		require.Equal(t, scanRow{r.Ms, fmt.Sprint(scanFiles(i)), fmt.Sprint(scanSkipped(i)), fmt.Sprint(scanFiles(i) << 20)}, r, "scan %d", i)
	}
	type commitRow struct{ Ms, Attempts, Added string }
	commits := eval[[]commitRow](t, br, `[...document.querySelectorAll('#commit-table tr.commit-row')].map(r => ({
		Ms: r.children[3].dataset.ms, Attempts: r.children[4].textContent, Added: r.children[5].textContent}))`)
	require.Len(t, commits, 10)
	for i, r := range commits {
		ms, err := strconv.ParseFloat(r.Ms, 64)
		require.NoError(t, err)
		require.InDelta(t, float64(commitMs(i)), ms, 1e-6, "commit %d duration", i)
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

	// A catalog that keeps no reports (--reports-retention 0) answers the
	// route 404; the page says so and works on.
	off := setupReports(t, "sqlite", false, 0)
	off.createNamespace(t, "ns")
	require.Equal(t, 200, off.createTable(t, "ns", "off", nil).status)
	offBr := newBrowser(t, off.url, shots)
	offBr.open(t, "#/w/wh/n/ns/t/off", "#reports-off")
	require.Contains(t, offBr.text(t, "#reports-off"), "404")
	offBr.waitFor(t, "#eligible")
	offBr.shot(t, "03-reports-off")

	// At a phone's width the charts take their box's width.
	require.NoError(t, chromedp.Do(br.ctx, chromedp.EmulateViewport(390, 844)))
	br.open(t, "#/w/wh/n/ns/t/busy", "#commit-charts canvas")
	overflow := eval[bool](t, br, `document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`)
	require.False(t, overflow, "the reports section scrolls sideways at 390px")
	br.shot(t, "04-reports-narrow")

	names, _ := filepath.Glob(filepath.Join(shots, "*.png"))
	require.Len(t, names, 4)
	for _, n := range names {
		st, err := os.Stat(n)
		require.NoError(t, err)
		require.Greater(t, st.Size(), int64(10_000), "%s is a page, not a blank", n)
	}
}
