package server_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/azuritetest"
)

// TestConsoleSetsAzureProfile: on a warehouse on Azure the warehouse page
// offers the Azure profile form; a profile set through it with the
// account key reads back with the account and filesystem and without the
// key. Setting a profile touches no storage, so no Azurite is needed.
func TestConsoleSetsAzureProfile(t *testing.T) {
	chromiumPath(t)
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{8}, 32))
	require.NoError(t, err)
	b, _ := azureSetup(t, "lakeui", vending.NewADLS(sealer, nil), sealer)
	br := newBrowser(t, b.url, screenshotDir(t, "azure"))
	br.open(t, "#/w/wh", "#az-account-name")
	require.Zero(t, eval[int](t, br, `document.querySelectorAll('#sp-region').length`), "no S3 form on an Azure warehouse")
	eval[bool](t, br, `document.querySelector('#az-account-name').closest('details').open = true`)
	for sel, v := range map[string]string{"#az-account-name": azuritetest.Account, "#az-filesystem": "lakeui",
		"#az-sas-lifetime": "30m", "#az-account-key": azuritetest.Key} {
		br.fill(t, sel, v)
	}
	br.click(t, `form:has(#az-account-name) button[type=submit]`)
	br.waitFor(t, "#profile")
	shown := br.text(t, "#profile")
	require.Contains(t, shown, `"filesystem": "lakeui"`)
	require.NotContains(t, shown, azuritetest.Key[:20])
	br.shot(t, "azure-profile")

	r := b.do(t, "GET", "/management/v1/warehouses/wh/storage-profile", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var p map[string]any
	require.NoError(t, json.Unmarshal(r.body, &p))
	require.Equal(t, "adls", p["type"])
	require.Equal(t, "30m", p["sas-lifetime"])
	require.NotContains(t, string(r.body), azuritetest.Key[:20])
}
