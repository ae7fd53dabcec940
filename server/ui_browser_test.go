package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/console"
)

// The console's browser tests drive Debian's chromium with chromedp. They
// fill a catalog through the REST API, open the console, and check that
// what the pages show is what the API says.

// chromiumPath returns the browser, or skips (fails when
// CATALOG_TEST_REQUIRE_BROWSER=1) when it is not installed.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CATALOG_TEST_REQUIRE_BROWSER") == "1" {
		t.Fatal("chromium is not installed but CATALOG_TEST_REQUIRE_BROWSER=1 (apt-get install chromium)")
	}
	t.Skip("console browser tests need chromium (apt-get install chromium); set CATALOG_TEST_REQUIRE_BROWSER=1 to fail instead")
	return ""
}

type browser struct {
	ctx     context.Context
	base    string // console URL, ending in /ui/
	shots   string // screenshot folder
	mu      sync.Mutex
	errs    []string
	started bool
}

// newBrowser starts headless chromium at 1280×800. Uncaught exceptions
// and console errors (CSP violations among them) are collected and fail
// the test at cleanup: the console shows API errors in the page and
// never logs them, so any logged error is a bug.
func newBrowser(t *testing.T, origin, shots string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	// Generous: make check runs these beside race-detector packages on two
	// cores; a wait only ends early when what it waits for appears.
	ctx, cancelTimeout := context.WithTimeout(ctx, 8*time.Minute)
	b := &browser{ctx: ctx, base: origin + "/ui/", shots: shots}
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			// Only the console's own page counts: the sign-in provider's
			// pages are not ours to judge.
			foreign := m.URL != "" && !strings.HasPrefix(m.URL, origin)
			if (m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleError) && !foreign {
				b.mu.Lock()
				b.errs = append(b.errs, string(m.Type)+": "+m.Text)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		<-done
		for _, e := range b.errs {
			// The browser itself logs each non-2xx fetch ("Failed to load
			// resource: ... 404"); the console's expected refusals are those.
			if !strings.Contains(e, "Failed to load resource") {
				t.Errorf("browser: %s", e)
			}
		}
	})
	return b
}

// open shows the console page at hash and waits for sel. The first call
// loads the app; later ones change the hash, after emptying <main> so that
// sel cannot match the previous page.
func (b *browser) open(t *testing.T, hash, sel string) {
	t.Helper()
	var act chromedp.Action[chromedp.Void]
	if !b.started {
		act = chromedp.Navigate(b.base + hash)
		b.started = true
	} else {
		// The same hash fires no hashchange: send one, as a reload would.
		act = chromedp.Steps(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById('main').replaceChildren();
			if (location.hash === %[1]q) window.dispatchEvent(new HashChangeEvent('hashchange')); else location.hash = %[1]q;`, hash)))
	}
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, act, chromedp.WaitVisible(chromedp.CSS(sel))), "open %s, wait for %s", hash, sel)
}

// eval runs js in the page and decodes its (JSON-able) result into out.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, "eval %s", js)
	return v
}

// shot saves a full-page screenshot as <name>.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(b.shots, name+".png"), buf, 0o644))
}

// text returns the text of the first element matching sel.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	return eval[string](t, b, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, sel))
}

// fill types value into the input sel (after clearing it).
func (b *browser) fill(t *testing.T, sel, value string) {
	t.Helper()
	eval[chromedp.Void](t, b, fmt.Sprintf(`document.querySelector(%q).value = ''`, sel))
	require.NoError(t, chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS(sel), value)), "type into %s", sel)
}

func (b *browser) click(t *testing.T, sel string) {
	t.Helper()
	require.NoError(t, chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(sel))))
}

// stepTimeout bounds one wait of a browser test.
const stepTimeout = time.Minute

func (b *browser) waitFor(t *testing.T, sel string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))), "wait for %s", sel)
}

// screenshotDir makes the folder the screenshots go to and prints it.
func screenshotDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp(os.Getenv("TMPDIR"), "lakehold-console-"+name+"-")
	require.NoError(t, err)
	t.Logf("console screenshots: %s", dir)
	return dir
}

// nestedSchema has every nesting kind and an identifier field.
const nestedSchema = `{"type":"struct","schema-id":0,"identifier-field-ids":[1],"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"ts","type":"timestamptz","required":false},
 {"id":3,"name":"tags","type":{"type":"list","element-id":6,"element":"string","element-required":false},"required":false},
 {"id":4,"name":"attrs","type":{"type":"map","key-id":7,"key":"string","value-id":8,"value":"long","value-required":true},"required":false},
 {"id":5,"name":"loc","type":{"type":"struct","fields":[
   {"id":9,"name":"lat","type":"double","required":true},{"id":10,"name":"lon","type":"double","required":true}]},"required":false}]}`

// fillV2Table creates ns.events (v2, partitioned by day(ts)) with n
// snapshots on main, a tag, and a partition evolution halfway. The
// manifest lists the snapshots name are not written: nothing on these
// paths (load, commit, the console) opens them.
func fillV2Table(t *testing.T, b *bundle, n int) {
	t.Helper()
	r := b.createTable(t, "ns", "events", map[string]any{"schema": rawJSON(nestedSchema),
		"partition-spec": rawJSON(`{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"ts_day","transform":"day"}]}`),
		"write-order":    rawJSON(`{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}`),
		"properties":     map[string]string{"format-version": "2", "owner": "console-test"}})
	require.Equal(t, 200, r.status, "%s", r.body)
	loc := r.json(t)["metadata"].(map[string]any)["location"].(string)
	path := "/v1/wh/namespaces/ns/tables/events"
	// Snapshots may not predate the table, nor lie more than the allowed
	// clock skew (1m) ahead: one second apart, from now.
	start := time.Now()
	for i := 1; i <= n; i++ {
		id := int64(1000 + i)
		snap := map[string]any{"snapshot-id": id, "sequence-number": i, "schema-id": 0,
			"timestamp-ms":  start.Add(time.Duration(i) * time.Second).UnixMilli(),
			"manifest-list": fmt.Sprintf("%s/metadata/snap-%d.avro", loc, id),
			"summary": map[string]any{"operation": "append", "added-records": "100", "total-records": fmt.Sprint(100 * i),
				"added-data-files": "1", "total-data-files": fmt.Sprint(i), "total-files-size": fmt.Sprint(4096 * i)}}
		if i > 1 {
			snap["parent-snapshot-id"] = id - 1
		}
		updates := []any{map[string]any{"action": "add-snapshot", "snapshot": snap}, mainRef(id)}
		if i == n/2 {
			updates = append(updates,
				map[string]any{"action": "add-spec", "spec": rawJSON(`{"spec-id":1,"fields":[{"source-id":2,"field-id":1001,"name":"ts_hour","transform":"hour"},{"source-id":1,"field-id":1002,"name":"id_bucket","transform":"bucket[8]"}]}`)},
				map[string]any{"action": "set-default-spec", "spec-id": -1},
				map[string]any{"action": "set-snapshot-ref", "ref-name": "before-evolution", "type": "tag", "snapshot-id": id})
		}
		r := b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": updates})
		require.Equal(t, 200, r.status, "snapshot %d: %s", i, r.body)
	}
}

// fillCatalog writes what the browser test looks at: ns.events (v2, 30
// snapshots), ns.wide (v4, column files), ns.v1 (a view with two
// dialects), ns.add_one (a function), ns.big (10,000 snapshots) and a
// nested namespace.
func fillCatalog(t *testing.T, b *bundle) {
	t.Helper()
	b.createNamespace(t, "ns")
	b.createNamespace(t, "ns", "inner")
	fillV2Table(t, b, 30)

	vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 10, "b.parquet": 10})
	for i, base := range []string{"a.parquet", "b.parquet"} {
		cf := fmt.Sprintf("cf%d.parquet", i)
		size := writeScores(t, filepath.Join(vt.dir, "data", cf), 10, float64(i), i == 1, false)
		ids := []int{3}
		if i == 1 {
			ids = []int{3, 4}
		}
		r := vt.commit(t, vt.columnFile(base, cf, 10, ids, size))
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	r := b.do(t, "POST", vt.path, map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties",
		"updates": map[string]string{"write.parquet.bloom-filter-enabled.column.id": "true"}}}})
	require.Equal(t, 200, r.status, "%s", r.body)

	r = b.do(t, "POST", "/v1/wh/namespaces/ns/views", map[string]any{
		"name": "v1", "schema": rawJSON(testSchema), "properties": map[string]string{"comment": "two dialects"},
		"view-version": rawJSON(`{"version-id":1,"timestamp-ms":1700000000000,"schema-id":0,"summary":{"operation":"create"},"default-namespace":["ns"],
		 "representations":[{"type":"sql","sql":"SELECT id, data FROM ns.events","dialect":"spark"},{"type":"sql","sql":"SELECT \"id\", \"data\" FROM \"ns\".\"events\"","dialect":"trino"}]}`),
	})
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/ns/functions", functionBody("add_one"))
	require.Equal(t, 200, r.status, "%s", r.body)

	metaLoc := manySnapshotsMetadata(t, strings.TrimPrefix(b.warehouse, "file://"), 10_000)
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "big", "metadata-location": metaLoc})
	require.Equal(t, 200, r.status, "%s", r.body)
}

// TestConsoleInBrowser opens every console page on a filled catalog and
// checks it against the API; then creates a warehouse, a namespace, a
// property and drops a table through the UI and checks them through the
// API.
func TestConsoleInBrowser(t *testing.T) {
	chromiumPath(t)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			fillCatalog(t, b)
			br := newBrowser(t, b.url, screenshotDir(t, backend))
			checkBrowsePages(t, b, br)
			keyboardOnly(t, br)
			checkTablePage(t, b, br)
			checkV4Page(t, b, br)
			checkEligibilityWarnings(t, b, br)
			checkV4History(t, b, br)
			checkColumnDebt(t, b, br)
			checkViewPage(t, b, br)
			checkFunctionPage(t, b, br)
			timeBigTable(t, br)
			manageThroughUI(t, b, br)
			checkJobsPages(t, b, br)
			checkDeletedObjects(t, b, br)
			narrowWindow(t, br)
		})
	}
}

func checkBrowsePages(t *testing.T, b *bundle, br *browser) {
	br.open(t, "#/", "#warehouses")
	require.Contains(t, br.text(t, "#warehouses"), "wh")
	br.shot(t, "01-warehouses")

	br.open(t, "#/w/wh", "#ns-list li")
	require.Contains(t, br.text(t, "#ns-list"), "ns")
	br.shot(t, "02-warehouse")

	br.open(t, "#/w/wh/n/ns", "#tables-list li")
	br.waitFor(t, "#views-list li")
	br.waitFor(t, "#functions-list li")
	br.waitFor(t, "#ns-list li")
	var tables, views, functions []string
	tables = eval[[]string](t, br, `[...document.querySelectorAll('#tables-list li')].map(e => e.textContent)`)
	views = eval[[]string](t, br, `[...document.querySelectorAll('#views-list li')].map(e => e.textContent)`)
	functions = eval[[]string](t, br, `[...document.querySelectorAll('#functions-list li')].map(e => e.textContent)`)
	require.ElementsMatch(t, []string{"events", "wide", "big"}, tables)
	require.Equal(t, []string{"v1"}, views)
	require.Equal(t, []string{"add_one"}, functions)
	link := eval[string](t, br, `document.querySelector('#functions-list a').getAttribute('href')`)
	require.Equal(t, "#/w/wh/n/ns/f/add_one", link)
	require.Contains(t, br.text(t, "#ns-list"), "inner")

	// Search filters by name.
	br.fill(t, "#tables-list-search", "wi")
	tables = eval[[]string](t, br, `[...document.querySelectorAll('#tables-list li')].map(e => e.textContent)`)
	require.Equal(t, []string{"wide"}, tables)
	br.shot(t, "03-namespace")
}

// apiFields flattens a schema from the API the way a reader would: every
// field id with its name, nested ones included.
func apiFields(fields []any, out map[string]string) {
	for _, f := range fields {
		m := f.(map[string]any)
		out[fmt.Sprint(m["id"])] = m["name"].(string)
		apiNested(m["type"], out)
	}
}

func apiNested(typ any, out map[string]string) {
	m, ok := typ.(map[string]any)
	if !ok {
		return
	}
	switch m["type"] {
	case "struct":
		apiFields(m["fields"].([]any), out)
	case "list":
		out[fmt.Sprint(m["element-id"])] = "element"
		apiNested(m["element"], out)
	case "map":
		out[fmt.Sprint(m["key-id"])] = "key"
		out[fmt.Sprint(m["value-id"])] = "value"
		apiNested(m["key"], out)
		apiNested(m["value"], out)
	}
}

func currentSchema(meta map[string]any) map[string]any {
	for _, s := range meta["schemas"].([]any) {
		if s.(map[string]any)["schema-id"] == meta["current-schema-id"] {
			return s.(map[string]any)
		}
	}
	return nil
}

// shownFields reads the schema table: field id → name.
func (br *browser) shownFields(t *testing.T) map[string]string {
	rows := eval[[][]string](t, br, `[...document.querySelectorAll('#schema-fields tbody tr')].map(r => [r.dataset.fieldId, r.children[1].textContent.replace(/^└ /, '')])`)
	out := map[string]string{}
	for _, r := range rows {
		out[r[0]] = r[1]
	}
	return out
}

func checkTablePage(t *testing.T, b *bundle, br *browser) {
	meta := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/events", nil).json(t)["metadata"].(map[string]any)
	br.open(t, "#/w/wh/n/ns/t/events", "#snapshots-box[data-render-ms]")

	want := map[string]string{}
	apiFields(currentSchema(meta)["fields"].([]any), want)
	require.Len(t, want, 10)
	require.Equal(t, want, br.shownFields(t))
	// Ids are the catalog's (it assigns fresh ones on create), so rows are
	// found by the API's ids.
	sc := currentSchema(meta)
	ident := sc["identifier-field-ids"].([]any)
	require.Len(t, ident, 1)
	require.Contains(t, br.text(t, fmt.Sprintf(`#schema-fields tr[data-field-id="%v"]`, ident[0])), "identifier")
	for _, f := range sc["fields"].([]any) {
		if f := f.(map[string]any); f["name"] == "attrs" {
			require.Contains(t, br.text(t, fmt.Sprintf(`#schema-fields tr[data-field-id="%v"]`, f["id"])), "map<string, long>")
		}
	}

	count := eval[string](t, br, `document.getElementById('snapshot-count').dataset.count`)
	require.Equal(t, fmt.Sprint(len(meta["snapshots"].([]any))), count)
	require.Equal(t, "30", count)
	var specs, rows, plots, refs int
	specs = eval[int](t, br, `document.querySelectorAll('#partition-specs tbody tr').length`)
	rows = eval[int](t, br, `document.querySelectorAll('#snapshot-table tbody tr').length`)
	plots = eval[int](t, br, `document.querySelectorAll('#snapshot-chart canvas').length`)
	refs = eval[int](t, br, `document.querySelectorAll('#refs-table tbody tr').length`)
	require.Equal(t, len(meta["partition-specs"].([]any)), specs)
	require.Equal(t, 2, specs, "the evolution left two specs")
	require.Contains(t, br.text(t, `#partition-specs tr[data-spec-id="1"]`), "bucket[8](id)")
	require.Equal(t, 30, rows)
	require.Equal(t, 3, plots, "records, files and size charts")
	require.Equal(t, len(meta["refs"].(map[string]any)), refs)
	require.Equal(t, "2", br.text(t, "#format-version"))
	// The reports section settles without an error: on a catalog without
	// stored reports it says so, on one with them it shows them or says
	// there are none (this table has none).
	br.waitFor(t, "#reports-off, #reports-empty")
	require.Zero(t, eval[int](t, br, `document.querySelectorAll('#reports .error').length`))
	br.shot(t, "04-table-v2")
}

func checkV4Page(t *testing.T, b *bundle, br *browser) {
	path := "/v1/wh/namespaces/ns/tables/wide"
	var cf struct {
		DataFiles []struct {
			DataFile    string `json:"data-file"`
			ColumnFiles []struct {
				Location string `json:"location"`
				FieldIDs []int  `json:"field-ids"`
			} `json:"column-files"`
		} `json:"data-files"`
	}
	require.NoError(t, json.Unmarshal(b.do(t, "GET", path+"/column-files", nil).body, &cf))
	var want []string
	for _, d := range cf.DataFiles {
		for _, c := range d.ColumnFiles {
			ids := make([]string, len(c.FieldIDs))
			for i, id := range c.FieldIDs {
				ids[i] = fmt.Sprint(id)
			}
			want = append(want, d.DataFile+" "+c.Location+" "+strings.Join(ids, ","))
		}
	}
	require.Len(t, want, 2)

	br.open(t, "#/w/wh/n/ns/t/wide", ".cf-row")
	br.waitFor(t, "#eligible")
	got := eval[[]string](t, br, `[...document.querySelectorAll('.cf-row')].map(r => r.dataset.base + ' ' + r.dataset.cf + ' ' + r.children[2].dataset.fieldIds)`)
	require.ElementsMatch(t, want, got)
	require.Contains(t, br.text(t, ".cf-row:last-child"), "score (3)")

	// v4 snapshot summaries carry the Iceberg totals, and the snapshot
	// table (newest first) shows them.
	meta := b.do(t, "GET", path, nil).json(t)["metadata"].(map[string]any)
	var sum map[string]any
	for _, sn := range meta["snapshots"].([]any) {
		if sn := sn.(map[string]any); fmt.Sprint(sn["snapshot-id"]) == fmt.Sprint(meta["current-snapshot-id"]) {
			sum = sn["summary"].(map[string]any)
		}
	}
	require.Equal(t, "20", sum["total-records"], "a.parquet and b.parquet, 10 rows each")
	require.NotEqual(t, "0", sum["total-files-size"])
	br.waitFor(t, "#snapshot-table tbody tr")
	cells := eval[[]string](t, br, `[...document.querySelector('#snapshot-table tbody tr').children].map(c => c.textContent)`)
	require.Equal(t, "20", cells[5], "total records")
	require.Equal(t, sum["total-data-files"], cells[6])
	require.NotEmpty(t, cells[7], "size")

	el := b.do(t, "GET", path+"/native-write-eligibility", nil).json(t)
	var wantCodes, gotCodes []string
	for _, r := range el["reasons"].([]any) {
		wantCodes = append(wantCodes, r.(map[string]any)["code"].(string))
	}
	require.NotEmpty(t, wantCodes, "the bloom-filter property makes the table fall back")
	gotCodes = eval[[]string](t, br, `[...document.querySelectorAll('#eligibility-table .reason')].map(r => r.dataset.code)`)
	require.Equal(t, wantCodes, gotCodes)
	eligible := eval[string](t, br, `document.getElementById('eligible').dataset.eligible`)
	require.Equal(t, fmt.Sprint(el["eligible"]), eligible)
	require.Contains(t, br.text(t, "#eligibility-table"), "write.parquet.bloom-filter-enabled.column.id")
	require.Equal(t, "4", br.text(t, "#format-version"))
	require.Contains(t, br.text(t, "#v4-notice"), "cannot go back", "the v4 page says what v4 costs")
	require.Contains(t, br.text(t, "#v4-badge"), "v4")
	br.shot(t, "05-table-v4")
}

// checkEligibilityWarnings: a table Comet writes natively but can get
// wrong (an identity partition on a double column) shows as eligible with
// the API's warnings in their own table.
func checkEligibilityWarnings(t *testing.T, b *bundle, br *browser) {
	r := b.createTable(t, "ns", "scores", map[string]any{
		"schema": rawJSON(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},` +
			`{"id":2,"name":"score","type":"double","required":false}]}`),
		"partition-spec": rawJSON(`{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"score","transform":"identity"}]}`),
		"properties":     map[string]string{"format-version": "2"}})
	require.Equal(t, 200, r.status, "%s", r.body)
	el := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/scores/native-write-eligibility", nil).json(t)
	require.Equal(t, true, el["eligible"])
	ws := el["warnings"].([]any)
	require.Len(t, ws, 1)
	require.Equal(t, "float-identity-partition", ws[0].(map[string]any)["code"])
	br.open(t, "#/w/wh/n/ns/t/scores", "#eligibility-warnings .warning")
	require.Equal(t, "true", eval[string](t, br, `document.getElementById('eligible').dataset.eligible`))
	codes := eval[[]string](t, br, `[...document.querySelectorAll('#eligibility-warnings .warning')].map(r => r.dataset.code)`)
	require.Equal(t, []string{"float-identity-partition"}, codes)
	require.Contains(t, br.text(t, "#eligibility-warnings"), "apache/iceberg-rust#3325")
	require.Zero(t, eval[int](t, br, `document.querySelectorAll('#eligibility-table').length`), "no fallback reasons")
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/scores", nil).status)
}

func checkViewPage(t *testing.T, b *bundle, br *browser) {
	meta := b.do(t, "GET", "/v1/wh/namespaces/ns/views/v1", nil).json(t)["metadata"].(map[string]any)
	br.open(t, "#/w/wh/n/ns/v/v1", ".sql pre")
	want := map[string]string{}
	for _, v := range meta["versions"].([]any) {
		for _, r := range v.(map[string]any)["representations"].([]any) {
			rm := r.(map[string]any)
			want[rm["dialect"].(string)] = rm["sql"].(string)
		}
	}
	got := eval[map[string]string](t, br, `Object.fromEntries([...document.querySelectorAll('figure.sql')].map(f => [f.dataset.dialect, f.querySelector('pre').textContent]))`)
	require.Equal(t, want, got)
	require.Len(t, got, 2)
	wantFields := map[string]string{}
	apiFields(meta["schemas"].([]any)[0].(map[string]any)["fields"].([]any), wantFields)
	require.Equal(t, wantFields, br.shownFields(t))
	versions := eval[int](t, br, `document.querySelectorAll('#versions-table tbody tr').length`)
	require.Equal(t, len(meta["versions"].([]any)), versions)
	br.shot(t, "06-view")
}

// checkFunctionPage: the function page shows what loadFunction returns:
// the uuid, and for each definition its signature, current version and
// that version's SQL (not an older version's).
func checkFunctionPage(t *testing.T, b *bundle, br *browser) {
	loaded := b.do(t, "GET", "/v1/wh/namespaces/ns/functions/add_one", nil).json(t)
	meta := loaded["metadata"].(map[string]any)
	br.open(t, "#/w/wh/n/ns/f/add_one", "article.definition figure.sql pre")
	require.Equal(t, "add_one", br.text(t, "#function-name"))
	require.Equal(t, meta["function-uuid"], br.text(t, "#function-uuid"))
	require.Contains(t, br.text(t, "dl.facts"), loaded["metadata-location"])
	type shown struct {
		Params, Returns, Current string
		SQL                      map[string]string
	}
	want := map[string]shown{}
	for _, d := range meta["definitions"].([]any) {
		dm := d.(map[string]any)
		var params []string
		for _, p := range dm["parameters"].([]any) {
			pm := p.(map[string]any)
			params = append(params, pm["name"].(string)+" "+pm["type"].(string))
		}
		cur := fmt.Sprint(dm["current-version-id"])
		sql := map[string]string{}
		for _, v := range dm["versions"].([]any) {
			vm := v.(map[string]any)
			if fmt.Sprint(vm["version-id"]) != cur {
				continue
			}
			for _, r := range vm["representations"].([]any) {
				rm := r.(map[string]any)
				sql[rm["dialect"].(string)] = rm["sql"].(string)
			}
		}
		want[dm["definition-id"].(string)] = shown{strings.Join(params, ", "), dm["return-type"].(string), cur, sql}
	}
	got := eval[map[string]shown](t, br, `Object.fromEntries([...document.querySelectorAll('article.definition')].map(a => [a.dataset.definitionId, {
		Params: a.querySelector('.params').textContent, Returns: a.querySelector('.returns').textContent,
		Current: a.querySelector('.current-version').textContent,
		SQL: Object.fromEntries([...a.querySelectorAll('figure.sql')].map(f => [f.dataset.dialect, f.querySelector('pre').textContent]))}]))`)
	require.Equal(t, want, got)
	require.Len(t, got["int"].SQL, 1, "only the current version's SQL")
	br.shot(t, "06b-function")
}

// timeBigTable reports how long the 10,000-snapshot table page takes from
// the hash change to the drawn timeline (reported, not asserted: a shared
// machine's timing is no gate).
func timeBigTable(t *testing.T, br *browser) {
	for i := 0; i < 3; i++ {
		start := time.Now()
		br.open(t, "#/w/wh/n/ns/t/big", "#snapshots-box[data-render-ms]")
		wall := time.Since(start)
		inPage := eval[string](t, br, `document.getElementById('snapshots-box').dataset.renderMs`)
		count := eval[string](t, br, `document.getElementById('snapshot-count').dataset.count`)
		require.Equal(t, "10000", count)
		t.Logf("10,000-snapshot table page, run %d: %s ms in the page (first call to drawn chart and timeline), %s wall from the test", i+1, inPage, wall.Round(time.Millisecond))
		br.open(t, "#/w/wh/n/ns", "#tables-list li")
	}
	br.open(t, "#/w/wh/n/ns/t/big", "#snapshots-box[data-render-ms]")
	br.shot(t, "07-table-10k-snapshots")
}

func manageThroughUI(t *testing.T, b *bundle, br *browser) {
	// A warehouse.
	loc := "file://" + filepath.Join(t.TempDir(), "uiwh")
	br.open(t, "#/", "#create-warehouse-form")
	br.fill(t, "#new-wh-name", "ui_wh")
	br.fill(t, "#new-wh-location", loc)
	br.click(t, `#create-warehouse-form button[type=submit]`)
	br.waitFor(t, "#create-namespace-form")
	r := b.do(t, "GET", "/management/v1/warehouses/ui_wh", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, loc, r.json(t)["location"])

	// A namespace in it.
	br.fill(t, "#new-ns-name", "made_by_ui")
	br.click(t, `#create-namespace-form button[type=submit]`)
	br.waitFor(t, `[data-props="namespace"]`)
	require.Equal(t, 200, b.do(t, "GET", "/v1/ui_wh/namespaces/made_by_ui", nil).status)
	br.shot(t, "08-created-namespace")

	// A table property, through a commit.
	br.open(t, "#/w/wh/n/ns/t/events", `[data-props="table"] form`)
	br.fill(t, `input[aria-label="New property key"]`, "set-by")
	br.fill(t, `input[aria-label="New property value"]`, "console")
	br.click(t, `[data-props="table"] button[type=submit]`)
	_, err := chromedp.Run(br.ctx, chromedp.Poll[bool](`document.querySelector('[data-props="table"] [role=status]').textContent === 'Saved.'`))
	require.NoError(t, err, "status: %s", br.text(t, `[data-props="table"] [role=status]`))
	props := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/events?snapshots=refs", nil).json(t)["metadata"].(map[string]any)["properties"].(map[string]any)
	require.Equal(t, "console", props["set-by"])
	require.Equal(t, "console-test", props["owner"], "untouched properties stay")

	// Drop a table: the button stays disabled until the name is typed.
	require.Equal(t, 200, b.createTable(t, "ns", "doomed", nil).status)
	br.open(t, "#/w/wh/n/ns/t/doomed", "#drop-table")
	disabled := eval[bool](t, br, `document.getElementById('drop-table').disabled`)
	require.True(t, disabled)
	br.fill(t, "#drop-confirm", "ns.doomed")
	br.click(t, "#drop-table")
	br.waitFor(t, "#tables-list li")
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/doomed", nil).status)
}

// checkJobsPages: a drop with purge shows its job on the jobs page, the
// warehouse page and (by name, the table being gone) through the table
// filter; once a worker ran it, it lists as completed.
func checkJobsPages(t *testing.T, b *bundle, br *browser) {
	br.open(t, "#/w/wh/n/ns/t/events", "#table-jobs-info")
	_, err := chromedp.Run(br.ctx, chromedp.Poll[bool](`document.getElementById('table-jobs-info').textContent === 'No jobs.'`))
	require.NoError(t, err, "table jobs: %s", br.text(t, "#table-jobs-info"))

	require.Equal(t, 200, b.createTable(t, "ns", "purged", nil).status)
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/purged?purgeRequested=true", nil).status)
	br.open(t, "#/admin/jobs", "tr.job-row")
	row := br.text(t, "#jobs")
	require.Contains(t, row, "purge-table")
	require.Contains(t, row, "wh/ns.purged")
	require.Contains(t, row, "available")
	br.shot(t, "11-jobs")
	br.open(t, "#/w/wh", "#warehouse-jobs tr.job-row")
	require.Contains(t, br.text(t, "#warehouse-jobs"), "ns.purged")

	b.drainJobs(t)
	br.open(t, "#/admin/jobs", "#jobs-filters")
	br.fill(t, "#jobs-warehouse", "wh")
	br.fill(t, "#jobs-table", "ns.purged")
	_, err = chromedp.Run(br.ctx, chromedp.SetValue("#jobs-state", "completed"))
	require.NoError(t, err)
	br.click(t, "#jobs-filters button[type=submit]")
	_, err = chromedp.Run(br.ctx, chromedp.Poll[bool](`document.querySelectorAll('tr.job-row').length === 1 &&
		document.querySelector('tr.job-row').dataset.state === 'completed'`))
	require.NoError(t, err, "filtered jobs: %s", br.text(t, "#jobs"))
	require.Contains(t, br.text(t, "#jobs"), "1 of 10")
	br.shot(t, "11b-jobs-completed")
}

// checkDeletedObjects: in a soft-delete warehouse a dropped table is listed
// on the warehouse page, and Undrop brings it back under a new name when a
// new table took the old one.
func checkDeletedObjects(t *testing.T, b *bundle, br *browser) {
	r := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": "soft_wh", "location": "file://" + filepath.Join(t.TempDir(), "soft"),
		"properties": map[string]string{"lakehold.deletion-profile": "soft"}})
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, 200, b.do(t, "POST", "/v1/soft_wh/namespaces", map[string]any{"namespace": []string{"ns"}}).status)
	for range 2 {
		require.Equal(t, 200, b.do(t, "POST", "/v1/soft_wh/namespaces/ns/tables", map[string]any{"name": "kept", "schema": rawJSON(testSchema)}).status)
		require.Equal(t, 204, b.do(t, "DELETE", "/v1/soft_wh/namespaces/ns/tables/kept", nil).status)
	}
	require.Equal(t, 200, b.do(t, "POST", "/v1/soft_wh/namespaces/ns/tables", map[string]any{"name": "kept", "schema": rawJSON(testSchema)}).status)
	br.open(t, "#/w/soft_wh", "tr.deleted-row")
	require.Equal(t, 2, eval[int](t, br, `document.querySelectorAll('tr.deleted-row').length`))
	br.shot(t, "11c-deleted")
	br.fill(t, `tr.deleted-row input`, "kept_again")
	br.click(t, `tr.deleted-row button[data-undrop]`)
	br.waitFor(t, "#undrop-status a")
	require.Contains(t, br.text(t, "#undrop-status"), "ns.kept_again")
	require.Equal(t, 200, b.do(t, "GET", "/v1/soft_wh/namespaces/ns/tables/kept_again", nil).status)
	require.Equal(t, 1, eval[int](t, br, `document.querySelectorAll('tr.deleted-row').length`))
}

// narrowWindow takes the table and namespace pages at a phone's width.
func narrowWindow(t *testing.T, br *browser) {
	require.NoError(t, chromedp.Do(br.ctx, chromedp.EmulateViewport(390, 844)))
	br.open(t, "#/w/wh/n/ns/t/events", "#snapshots-box[data-render-ms]")
	overflow := eval[bool](t, br, `document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`)
	require.False(t, overflow, "the page scrolls sideways at 390px; wide tables must scroll in their own box")
	br.shot(t, "09-table-narrow")
	br.open(t, "#/w/wh/n/ns", "#tables-list li")
	br.shot(t, "10-namespace-narrow")
	names, _ := filepath.Glob(filepath.Join(br.shots, "*.png"))
	sort.Strings(names)
	require.Len(t, names, 16)
}

// keyboardOnly opens a table from the namespace page with Tab and Enter
// alone.
func keyboardOnly(t *testing.T, br *browser) {
	br.open(t, "#/w/wh/n/ns", "#tables-list li")
	eval[chromedp.Void](t, br, `document.activeElement.blur(); window.scrollTo(0, 0)`)
	var reached string
	for i := 0; i < 60 && reached != "A events"; i++ {
		require.NoError(t, chromedp.Do(br.ctx, chromedp.KeyEvent("\t")))
		reached = eval[string](t, br, `document.activeElement.tagName + ' ' + document.activeElement.textContent`)
	}
	require.Equal(t, "A events", reached, "Tab never reached the table link")
	require.NoError(t, chromedp.Do(br.ctx, chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS("#snapshots-box[data-render-ms]"))))
	require.Contains(t, br.text(t, "h1"), "ns.events")
}

// refusingFront stands in for the catalog's access control, which is being
// built elsewhere: the console is served with an OIDC configuration, every
// API call must carry the reader's bearer token (401 otherwise), and
// dropping a table is refused with 403. Everything else goes to the real
// catalog.
func refusingFront(t *testing.T, catalogURL string) string {
	t.Helper()
	target, err := url.Parse(catalogURL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ui := console.Handler(console.Options{OIDCIssuer: "http://127.0.0.1:9/realms/none", OIDCClientID: "console"})
	refuse := func(w http.ResponseWriter, code int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, console.Prefix):
			ui.ServeHTTP(w, r)
		case r.Header.Get("Authorization") != "Bearer reader-token":
			refuse(w, 401, "NotAuthorizedException", "Not signed in")
		case r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/tables/"):
			refuse(w, 403, "ForbiddenException", "Principal oidc:reader lacks table-drop on ns.guarded")
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// TestConsoleShowsRefusals: with sign-in configured the console asks for
// it, sends the token on every call, shows a 403 plainly, and stops
// offering the refused action.
func TestConsoleShowsRefusals(t *testing.T) {
	chromiumPath(t)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "guarded", nil).status)
			br := newBrowser(t, refusingFront(t, b.url), screenshotDir(t, "refusals-"+backend))

			br.open(t, "#/w/wh/n/ns/t/guarded", "main button")
			require.Contains(t, br.text(t, "h1"), "Sign in")
			br.shot(t, "01-sign-in")

			// What the PKCE exchange would leave behind (the flow itself is
			// not exercised here: no provider runs in this test).
			eval[chromedp.Void](t, br, `sessionStorage.setItem('lakehold.token', JSON.stringify({access: 'reader-token', expires: Date.now() + 3600e3}))`)
			require.NoError(t, chromedp.Do(br.ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#drop-table"))))
			require.Contains(t, br.text(t, "#who"), "Sign out")

			br.fill(t, "#drop-confirm", "ns.guarded")
			br.click(t, "#drop-table")
			br.waitFor(t, "#drop .error")
			msg := br.text(t, "#drop .error")
			require.Contains(t, msg, "403")
			require.Contains(t, msg, "Principal oidc:reader lacks table-drop on ns.guarded")
			require.Equal(t, 0, eval[int](t, br, `document.querySelectorAll('#drop-table').length`), "the refused button is withdrawn")
			br.shot(t, "02-drop-refused")
			require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/guarded", nil).status)

			// Back on the page, the action is no longer offered.
			br.open(t, "#/w/wh/n/ns", "#tables-list li")
			br.open(t, "#/w/wh/n/ns/t/guarded", "#snapshots-box[data-render-ms]")
			require.Equal(t, 0, eval[int](t, br, `document.querySelectorAll('#drop, [data-target=drop]').length`))
		})
	}
}

// jwtClaims decodes a JWT's payload without checking it: the catalog's
// authenticator verifies tokens; this only shows which token arrived.
func jwtClaims(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var c map[string]any
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	return c
}

// signInFront serves the console with Keycloak as its provider and lets
// API calls through only with a token Keycloak issued to the console's
// client; it records the users it saw.
func signInFront(t *testing.T, catalogURL, issuer string, seen chan<- string) string {
	t.Helper()
	target, err := url.Parse(catalogURL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ui := console.Handler(console.Options{OIDCIssuer: issuer, OIDCClientID: "lakehold-console", OIDCScopes: "openid"})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, console.Prefix) {
			ui.ServeHTTP(w, r)
			return
		}
		c := jwtClaims(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if c == nil || c["iss"] != issuer || c["azp"] != "lakehold-console" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		select {
		case seen <- fmt.Sprint(c["preferred_username"]):
		default:
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// TestConsoleSignInWithKeycloak runs the console's authorization-code +
// PKCE sign-in against a real Keycloak (scripts/keycloak-start.sh) in the
// browser: the login form, the redirect back, the code exchange, then API
// calls carrying the token.
func TestConsoleSignInWithKeycloak(t *testing.T) {
	chromiumPath(t)
	issuer := os.Getenv("KEYCLOAK_ISSUER")
	if issuer == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_KEYCLOAK") == "1" {
			t.Fatal("KEYCLOAK_ISSUER is not set but CATALOG_TEST_REQUIRE_KEYCLOAK=1")
		}
		t.Skip("needs a Keycloak: run through scripts/test.sh or set KEYCLOAK_ISSUER (scripts/keycloak-start.sh)")
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			seen := make(chan string, 100)
			br := newBrowser(t, signInFront(t, b.url, issuer, seen), screenshotDir(t, "sign-in-"+backend))
			br.open(t, "#/w/wh/n/ns", "main button")
			br.click(t, "main button")
			br.waitFor(t, "#username")
			br.shot(t, "01-provider-login")
			br.fill(t, "#username", "alice")
			br.fill(t, "#password", "alice-password")
			br.click(t, "#kc-login")
			br.waitFor(t, "#tables-list + p")
			require.Contains(t, br.text(t, "h1"), "ns")
			require.Contains(t, br.text(t, "#who"), "Sign out")
			require.Equal(t, "alice", <-seen)
			loc := eval[string](t, br, `location.href`)
			require.NotContains(t, loc, "code=", "the code is removed from the address bar")
			require.True(t, strings.HasSuffix(loc, "/ui/#/w/wh/n/ns"), "back where sign-in started: %s", loc)
			br.shot(t, "02-signed-in")
		})
	}
}

// columnFilesAt returns base file -> its column files' locations at a
// snapshot ("" for none: before the first snapshot nothing has any).
func columnFilesAt(t *testing.T, b *bundle, path, snapshotID string) map[string][]string {
	out := map[string][]string{}
	if snapshotID == "" {
		return out
	}
	var cf struct {
		DataFiles []struct {
			DataFile    string `json:"data-file"`
			ColumnFiles []struct {
				Location string `json:"location"`
			} `json:"column-files"`
		} `json:"data-files"`
	}
	r := b.do(t, "GET", path+"/column-files?snapshot-id="+snapshotID, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.NoError(t, json.Unmarshal(r.body, &cf))
	for _, d := range cf.DataFiles {
		for _, c := range d.ColumnFiles {
			out[d.DataFile] = append(out[d.DataFile], c.Location)
		}
	}
	return out
}

// checkV4History replaces the column file of base a.parquet (retiring
// the first one) and checks the page's REPLACED/MODIFIED history against
// the API: per column-update snapshot, each base file whose column files
// changed, with what was added and retired.
func checkV4History(t *testing.T, b *bundle, br *browser) {
	path := "/v1/wh/namespaces/ns/tables/wide"
	loc, _, _ := v4Meta(t, b.do(t, "GET", path, nil))
	vt := &v4Table{b: b, loc: loc, dir: strings.TrimPrefix(loc, "file://"), path: path}
	size := writeScores(t, filepath.Join(vt.dir, "data", "cf2.parquet"), 10, 7, false, false)
	r := vt.commit(t, vt.columnFile("a.parquet", "cf2.parquet", 10, []int{3}, size))
	require.Equal(t, 200, r.status, "%s", r.body)

	var meta struct {
		Metadata struct {
			Snapshots []struct {
				ID      json.Number       `json:"snapshot-id"`
				Parent  json.Number       `json:"parent-snapshot-id"`
				Summary map[string]string `json:"summary"`
			} `json:"snapshots"`
		} `json:"metadata"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b.do(t, "GET", path, nil).body)))
	dec.UseNumber() // snapshot ids are 62-bit
	require.NoError(t, dec.Decode(&meta))
	var want []string
	retiredOnce := false
	for _, s := range meta.Metadata.Snapshots {
		if _, ok := s.Summary["modified-data-files"]; !ok {
			continue
		}
		before, after := columnFilesAt(t, b, path, s.Parent.String()), columnFilesAt(t, b, path, s.ID.String())
		for base := range mergeKeys(before, after) {
			added, retired := minus(after[base], before[base]), minus(before[base], after[base])
			if len(added)+len(retired) > 0 {
				want = append(want, fmt.Sprintf("%s %s +%s -%s", s.ID, base, strings.Join(added, " "), strings.Join(retired, " ")))
				retiredOnce = retiredOnce || len(retired) > 0
			}
		}
	}
	require.Len(t, want, 3, "three column updates, one base file each")
	require.True(t, retiredOnce, "the last update retired a column file")

	br.open(t, "#/w/wh/n/ns/t/wide", "#column-history-table")
	got := eval[[]string](t, br, `[...document.querySelectorAll('tr.cf-hist')].map(r => r.dataset.snapshot + ' ' + r.dataset.base + ' +' + r.dataset.added + ' -' + r.dataset.retired)`)
	require.ElementsMatch(t, want, got)
	require.Contains(t, br.text(t, "#column-history"), "3 column update(s)")
	br.shot(t, "05b-table-v4-history")
}

func mergeKeys(a, b map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// minus returns the elements of a not in b, in a's order.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// checkColumnDebt: the v4 page shows the column-file debt the API
// measures now, and draws it at each snapshot that changed column files
// (the three column updates of fillCatalog and checkV4History).
func checkColumnDebt(t *testing.T, b *bundle, br *browser) {
	path := "/v1/wh/namespaces/ns/tables/wide"
	var meta struct {
		Metadata struct {
			Snapshots []struct {
				ID      json.Number       `json:"snapshot-id"`
				Summary map[string]string `json:"summary"`
			} `json:"snapshots"`
		} `json:"metadata"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b.do(t, "GET", path, nil).body)))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&meta))
	var want []string
	for _, s := range meta.Metadata.Snapshots {
		if _, ok := s.Summary["added-column-files"]; !ok {
			continue
		}
		id, err := s.ID.Int64()
		require.NoError(t, err)
		d := readDebt(t, b, "wide", id)
		want = append(want, fmt.Sprintf("%s:%d:%d", s.ID, d.ColumnFiles, d.RetiredBytes))
	}
	require.Len(t, want, 3, "three column updates")
	now := readDebt(t, b, "wide", 0)
	require.Equal(t, 2, now.Bases)
	require.Positive(t, now.RetiredBytes, "the column files supersede base columns")

	br.open(t, "#/w/wh/n/ns/t/wide", "#debt-chart canvas")
	shown := eval[map[string]string](t, br, `({...document.getElementById('debt-now').dataset})`)
	require.Equal(t, map[string]string{"bases": fmt.Sprint(now.Bases), "columnFiles": fmt.Sprint(now.ColumnFiles), "max": fmt.Sprint(now.MaxPerBase),
		"retired": fmt.Sprint(now.RetiredBytes), "candidates": fmt.Sprint(now.Candidates)}, shown)
	points := eval[string](t, br, `document.getElementById('debt-chart').dataset.points`)
	require.Equal(t, strings.Join(want, " "), points, "oldest first, as the API measures each snapshot")
	require.Equal(t, 2, eval[int](t, br, `document.querySelectorAll('#debt-chart canvas').length`), "column files per base, retired bytes")
	require.Greater(t, drawnPixels(t, br, "#debt-chart", "#bf5700"), 50, "the retired bytes are drawn")
	require.Contains(t, br.text(t, "#column-debt"), "compaction folds a base with more than 8")
	br.shot(t, "05c-table-v4-debt")
}
