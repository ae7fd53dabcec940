package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleImport imports from a second Lakehold (behind a client
// credentials sign-in) through the warehouse page's Import form: a dry run
// that writes nothing, then the real run, then the imported namespace and
// table in the tree. A run the source refuses clears the credential too.
func TestConsoleImport(t *testing.T) {
	chromiumPath(t)
	e := &importEnv{}
	e.outside = "file://" + t.TempDir() + "/outside"
	e.src = setupTB(t, "sqlite", map[string]string{"allowed-locations": e.outside})
	e.srcURI = e.gate(t)
	e.seed(t)
	dst := setupTB(t, "sqlite", map[string]string{"allowed-locations": e.src.warehouse})
	br := newBrowser(t, dst.url, screenshotDir(t, "import"))

	rows := func() map[string]string {
		return eval[map[string]string](t, br, `Object.fromEntries([...document.querySelectorAll('#imp-items tr.import-item')].map(r => [r.dataset.name, r.dataset.status]))`)
	}
	br.open(t, "#/w/wh", "#import summary")
	br.click(t, "#import summary")
	br.waitFor(t, "#imp-source-uri")
	br.fill(t, "#imp-source-uri", e.srcURI)
	br.fill(t, "#imp-source-warehouse", "wh")
	// A refused run clears the secret too.
	br.fill(t, "#imp-credential", "importer:wrong-secret")
	br.click(t, "#imp-run")
	br.waitFor(t, "#imp-status .error")
	require.Contains(t, br.text(t, "#imp-status"), "422")
	require.Empty(t, eval[string](t, br, `document.querySelector('#imp-credential').value`), "the secret is cleared after a refused run")
	br.fill(t, "#imp-credential", "importer:"+importSecret)
	require.True(t, eval[bool](t, br, `document.querySelector('#imp-dry-run').checked`), "a dry run is the default")
	br.shot(t, "01-import-form")
	br.click(t, "#imp-run")
	br.waitFor(t, "#imp-items")
	require.Contains(t, br.text(t, "#imp-status"), "Dry run: nothing was written")
	require.Equal(t, map[string]string{"namespace sales": "would-import", "namespace ops": "would-import",
		"table sales.orders": "would-import", "view sales.v_orders": "would-import",
		"view sales.v_odd": "refused", "table ops.elsewhere": "refused"}, rows())
	require.Contains(t, br.text(t, `#imp-items tr[data-name="view sales.v_odd"]`), `unknown SQL dialect "cobol"`)
	require.Contains(t, br.text(t, "#imp-summary"), "tables: 1 would-import, 0 skipped, 1 refused")
	require.Empty(t, eval[string](t, br, `document.querySelector('#imp-credential').value`), "the secret is cleared after a run")
	require.Equal(t, 404, dst.do(t, "GET", "/v1/wh/namespaces/sales", nil).status, "the dry run wrote nothing")
	br.shot(t, "02-dry-run")

	br.click(t, "#imp-dry-run")
	br.fill(t, "#imp-credential", "importer:"+importSecret)
	br.click(t, "#imp-run")
	br.waitFor(t, `#imp-items tr[data-status="imported"]`)
	require.Contains(t, br.text(t, "#imp-status"), "Import finished")
	require.Equal(t, map[string]string{"namespace sales": "imported", "namespace ops": "imported",
		"table sales.orders": "imported", "view sales.v_orders": "imported",
		"view sales.v_odd": "refused", "table ops.elsewhere": "refused"}, rows())
	require.NotContains(t, eval[string](t, br, `document.body.innerHTML`), importSecret)
	br.shot(t, "03-imported")

	// The imported table is in the tree, linked from the report.
	link := eval[string](t, br, `document.querySelector('#imp-items tr[data-name="table sales.orders"] a').getAttribute('href')`)
	require.Equal(t, "#/w/wh/n/sales/t/orders", link)
	br.open(t, "#/w/wh", "#ns-list li")
	require.Contains(t, br.text(t, "#ns-list"), "sales")
	br.open(t, "#/w/wh/n/sales", "#tables-list li")
	require.Equal(t, []string{"orders"}, eval[[]string](t, br, `[...document.querySelectorAll('#tables-list li')].map(e => e.textContent)`))
	br.waitFor(t, "#views-list li")
	require.Equal(t, []string{"v_orders"}, eval[[]string](t, br, `[...document.querySelectorAll('#views-list li')].map(e => e.textContent)`))
	br.open(t, "#/w/wh/n/sales/t/orders", "h1")
	require.Contains(t, br.text(t, "h1"), "orders")
	br.shot(t, "04-table")
	r := dst.do(t, "GET", "/v1/wh/namespaces/sales/tables/orders", nil)
	require.Equal(t, 200, r.status, string(r.body))
}
