package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestServesAssetsWithSecurityHeaders(t *testing.T) {
	h := Handler(Options{})
	cases := []struct {
		path, status, ctype, contains string
	}{
		{"/ui/", "200", "text/html", `<script type="module" src="js/app.js">`},
		{"/ui/js/app.js", "200", "javascript", "route"},
		{"/ui/app.css", "200", "text/css", ":root"},
		{"/ui/vendor/uPlot.iife.min.js", "200", "javascript", "uPlot"},
		{"/ui/config.json", "200", "application/json", `{"auth":null}`},
		{"/ui", "302", "", ""},
		{"/ui/nope.js", "404", "application/json", `"code":404`},
		{"/ui/js/", "404", "application/json", `"code":404`}, // no directory listings
		{"/ui/../go.mod", "404", "application/json", `"code":404`},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			res := get(t, h, "GET", c.path)
			body, _ := io.ReadAll(res.Body)
			if got := res.Status[:3]; got != c.status {
				t.Fatalf("status %s, want %s (%s)", res.Status, c.status, body)
			}
			if !strings.Contains(res.Header.Get("Content-Type"), c.ctype) {
				t.Errorf("Content-Type %q, want %q", res.Header.Get("Content-Type"), c.ctype)
			}
			if !strings.Contains(string(body), c.contains) {
				t.Errorf("body does not contain %q", c.contains)
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("CSP %q allows inline code", csp)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("missing nosniff or referrer policy: %v", res.Header)
			}
		})
	}
}

func TestRefusesWrites(t *testing.T) {
	res := get(t, Handler(Options{}), "POST", "/ui/")
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("status %d", res.StatusCode)
	}
}

func TestConfigWithOIDC(t *testing.T) {
	h := Handler(Options{OIDCIssuer: "https://idp.example:8443/realms/lake", OIDCClientID: "console"})
	res := get(t, h, "GET", "/ui/config.json")
	var c struct {
		Auth struct {
			Issuer   string `json:"issuer"`
			ClientID string `json:"client-id"`
			Scopes   string `json:"scopes"`
		} `json:"auth"`
	}
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Auth.Issuer != "https://idp.example:8443/realms/lake" || c.Auth.ClientID != "console" || c.Auth.Scopes != "openid" {
		t.Fatalf("config %+v", c)
	}
	// The browser must be allowed to reach the provider for discovery and
	// the token exchange, and nothing else.
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' https://idp.example:8443;") {
		t.Fatalf("CSP %q", csp)
	}
}

// TestConfigWithBuiltin: built-in sign-in alone, and beside OIDC, keeps
// the OIDC fields where they were and allows no origin but the catalog's
// own for the token endpoint.
func TestConfigWithBuiltin(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		want string
		csp  string
	}{
		{"builtin", Options{BuiltinSignIn: true}, `{"auth":{"builtin":{"token-endpoint":"/v1/oauth/tokens"}}}`, "connect-src 'self';"},
		{"both", Options{OIDCIssuer: "https://idp.example/realms/lake", OIDCClientID: "console", BuiltinSignIn: true},
			`{"auth":{"issuer":"https://idp.example/realms/lake","client-id":"console","scopes":"openid","builtin":{"token-endpoint":"/v1/oauth/tokens"}}}`,
			"connect-src 'self' https://idp.example;"},
		{"oidc", Options{OIDCIssuer: "https://idp.example/realms/lake", OIDCClientID: "console"},
			`{"auth":{"issuer":"https://idp.example/realms/lake","client-id":"console","scopes":"openid"}}`, "connect-src 'self' https://idp.example;"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := get(t, Handler(c.opts), "GET", "/ui/config.json")
			body, _ := io.ReadAll(res.Body)
			if string(body) != c.want {
				t.Errorf("config %s, want %s", body, c.want)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, c.csp) {
				t.Errorf("CSP %q lacks %q", csp, c.csp)
			}
			if res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", res.Header.Get("Cache-Control"))
			}
		})
	}
}

// TestNoInlineScript keeps index.html free of inline script and style,
// which the CSP would block anyway.
func TestNoInlineScript(t *testing.T) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, bad := range []string{"<script>", "<style", " style=", " onclick=", "onload="} {
		if strings.Contains(s, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
}
