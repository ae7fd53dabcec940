package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleSetsSigningProfile: the warehouse page's profile form sets a
// signing-only S3 profile (remote signing ticked, no role to assume), as
// an operator of a store without STS does; the profile read back says so
// and holds no secret.
func TestConsoleSetsSigningProfile(t *testing.T) {
	chromiumPath(t)
	b, _ := vendingSetup(t)
	br := newBrowser(t, b.url, screenshotDir(t, "signing"))
	br.open(t, "#/w/wh", "#sp-remote-signing")
	eval[bool](t, br, `document.querySelector('#sp-remote-signing').closest('details').open = true`)
	for sel, v := range map[string]string{"#sp-region": "us-east-1", "#sp-endpoint": "http://minio:9000",
		"#sp-access-key-id": "catalog", "#sp-secret": catalogSecret} {
		br.fill(t, sel, v)
	}
	br.click(t, "#sp-path-style")
	br.click(t, "#sp-remote-signing")
	br.click(t, `form:has(#sp-remote-signing) button[type=submit]`)
	br.waitFor(t, "#profile")
	require.Contains(t, br.text(t, "#profile"), `"remote-signing-enabled": true`)
	br.shot(t, "signing-profile")

	r := b.do(t, "GET", "/management/v1/warehouses/wh/storage-profile", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var p map[string]any
	require.NoError(t, json.Unmarshal(r.body, &p))
	require.Equal(t, true, p["remote-signing-enabled"])
	require.Equal(t, true, p["path-style-access"])
	require.Empty(t, p["role-arn"], "a signing-only profile names no role")
	require.NotContains(t, string(r.body), catalogSecret)
}
