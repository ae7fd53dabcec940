package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// siteCase is one request of the cross-site tests. Unlike bundle.do it
// sends only the headers it names: no Content-Type unless given.
type siteCase struct {
	name, method, path string
	body               string // "" sends no body
	chunked            bool   // body without Content-Length
	hdr                []string
	host               string // Host header; "" keeps the server's address
	want               int
	typ                string // Iceberg error type, for want >= 400
}

func (c siteCase) send(t *testing.T, b *bundle) response {
	t.Helper()
	var rd io.Reader
	if c.body != "" {
		rd = strings.NewReader(c.body)
		if c.chunked {
			rd = io.MultiReader(rd) // hides the length
		}
	}
	req, err := http.NewRequest(c.method, b.url+c.path, rd)
	require.NoError(t, err)
	if c.host != "" {
		req.Host = c.host
	}
	for i := 0; i+1 < len(c.hdr); i += 2 {
		req.Header.Add(c.hdr[i], c.hdr[i+1])
	}
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func runSiteCases(t *testing.T, b *bundle, cases []siteCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.send(t, b)
			require.Equal(t, c.want, r.status, "%s", r.body)
			if c.want >= 400 {
				typ, _ := r.errorOf(t)
				require.Equal(t, c.typ, typ)
				require.Equal(t, "application/json", r.header.Get("Content-Type"))
			}
		})
	}
}

// siteServer starts a catalog over SQLite with warehouse "wh" and the
// given configuration, with built-in authentication when auth is set.
func siteServer(t *testing.T, cfg server.Config, auth bool) (*bundle, *service.Service) {
	t.Helper()
	st := openStore(t, "sqlite")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var svc *service.Service
	opts := service.Options{Logger: quiet}
	if auth {
		bi, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: bytes.Repeat([]byte{7}, 32),
			Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
				return svc.Admin().PrincipalGeneration(ctx, name)
			})})
		require.NoError(t, err)
		opts.Tokens = bi
		cfg.Auth = authn.New(bi, nil)
	}
	svc = service.New(st, storage.NewProvider(), opts)
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	_, err := svc.CreateWarehouse(context.Background(), "wh", loc, nil)
	require.NoError(t, err)
	cfg.DefaultWarehouse, cfg.Logger = "wh", quiet
	hs := httptest.NewServer(server.New(svc, cfg))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client()}, svc
}

// TestCrossSiteContentType: with authentication off, a body on a JSON
// route must be declared JSON. text/plain (fetch with a string body, a
// form with enctype=text/plain), no type at all (a Blob without type) and
// form encodings are what a page of another site can send without a CORS
// preflight; each is refused with 415 and changes nothing.
func TestCrossSiteContentType(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
	ns := func(level string) string { return `{"namespace":["` + level + `"]}` }
	const unsupported = "UnsupportedMediaTypeException"
	cases := []siteCase{
		{name: "text/plain body", method: "POST", path: "/v1/wh/namespaces", body: ns("tp"),
			hdr: []string{"Content-Type", "text/plain;charset=UTF-8"}, want: 415, typ: unsupported},
		{name: "form enctype text/plain", method: "POST", path: "/v1/wh/namespaces", body: `{"namespace":["tf"],"x":"=y"}`,
			hdr: []string{"Content-Type", "text/plain"}, want: 415, typ: unsupported},
		{name: "Blob without type", method: "POST", path: "/v1/wh/namespaces", body: ns("blob"), want: 415, typ: unsupported},
		{name: "Blob without type, chunked", method: "POST", path: "/v1/wh/namespaces", body: ns("chunk"), chunked: true, want: 415, typ: unsupported},
		{name: "form POST", method: "POST", path: "/v1/wh/namespaces", body: "namespace=form",
			hdr: []string{"Content-Type", "application/x-www-form-urlencoded"}, want: 415, typ: unsupported},
		{name: "multipart form POST", method: "POST", path: "/v1/wh/namespaces",
			body: "--b\r\nContent-Disposition: form-data; name=\"namespace\"\r\n\r\nmp\r\n--b--\r\n",
			hdr:  []string{"Content-Type", "multipart/form-data; boundary=b"}, want: 415, typ: unsupported},
		{name: "text/plain with a JSON-looking parameter", method: "POST", path: "/v1/wh/namespaces", body: ns("param"),
			hdr: []string{"Content-Type", "text/plain; charset=application/json"}, want: 415, typ: unsupported},
		{name: "text/plain commit", method: "POST", path: "/v1/wh/namespaces/ns/tables/t", body: `{"requirements":[],"updates":[]}`,
			hdr: []string{"Content-Type", "text/plain"}, want: 415, typ: unsupported},
		{name: "text/plain rename", method: "POST", path: "/v1/wh/tables/rename",
			body: `{"source":{"namespace":["ns"],"name":"t"},"destination":{"namespace":["ns"],"name":"stolen"}}`,
			hdr:  []string{"Content-Type", "text/plain"}, want: 415, typ: unsupported},
		{name: "text/plain warehouse", method: "POST", path: "/management/v1/warehouses", body: `{"name":"evil","location":"file:///tmp/evil"}`,
			hdr: []string{"Content-Type", "text/plain"}, want: 415, typ: unsupported},
		{name: "text/plain PUT", method: "PUT", path: "/management/v1/warehouses/wh/storage-profile", body: `{"type":"s3"}`,
			hdr: []string{"Content-Type", "text/plain"}, want: 415, typ: unsupported},

		{name: "application/json", method: "POST", path: "/v1/wh/namespaces", body: ns("json"),
			hdr: []string{"Content-Type", "application/json"}, want: 200},
		{name: "application/json with charset", method: "POST", path: "/v1/wh/namespaces", body: ns("charset"),
			hdr: []string{"Content-Type", "application/json; charset=utf-8"}, want: 200},
		{name: "upper-case application/json", method: "POST", path: "/v1/wh/namespaces", body: ns("upper"),
			hdr: []string{"Content-Type", "Application/JSON"}, want: 200},
		{name: "application/*+json", method: "POST", path: "/v1/wh/namespaces", body: ns("plus"),
			hdr: []string{"Content-Type", "application/vnd.iceberg+json"}, want: 200},
		{name: "chunked application/json", method: "POST", path: "/v1/wh/namespaces", body: ns("chunkjson"), chunked: true,
			hdr: []string{"Content-Type", "application/json"}, want: 200},
		// Bodyless requests carry nothing to decode: planning takes an
		// optional body, drops none; some clients send a Content-Type
		// anyway, some none.
		{name: "bodyless POST without Content-Type", method: "POST", path: "/v1/wh/namespaces/ns/tables/t/plan", want: 200},
		{name: "bodyless POST with text/plain", method: "POST", path: "/v1/wh/namespaces/ns/tables/t/plan",
			hdr: []string{"Content-Type", "text/plain"}, want: 200},
		{name: "bodyless DELETE with purgeRequested", method: "DELETE", path: "/v1/wh/namespaces/ns/tables/gone?purgeRequested=true",
			want: 404, typ: "NoSuchTableException"},
		{name: "GET with a text/plain body", method: "GET", path: "/v1/wh/namespaces", body: "ignored",
			hdr: []string{"Content-Type", "text/plain"}, want: 200},
	}
	runSiteCases(t, b, cases)
	for _, level := range []string{"tp", "tf", "blob", "chunk", "form", "mp", "param"} {
		require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/"+level, nil).status, "namespace %s was created", level)
	}
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/stolen", nil).status)
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil).status)
	require.Equal(t, 404, b.do(t, "GET", "/management/v1/warehouses/evil", nil).status)
}

// TestCrossSiteTokenEndpointKeepsForm: the OAuth token endpoint takes its
// form encoding, with authentication on (a token is issued) and off (the
// endpoint's own answer, not a 415).
func TestCrossSiteTokenEndpointKeepsForm(t *testing.T) {
	a, svc := siteServer(t, server.Config{}, true)
	c, err := svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ClientID}, "client_secret": {c.ClientSecret}}.Encode()
	runSiteCases(t, a, []siteCase{
		{name: "auth on", method: "POST", path: "/v1/oauth/tokens", body: form,
			hdr: []string{"Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"}, want: 200},
	})
	off := setup(t, "sqlite")
	r := siteCase{method: "POST", path: "/v1/oauth/tokens", body: form, hdr: []string{"Content-Type", "application/x-www-form-urlencoded"}}.send(t, off)
	require.Equal(t, 400, r.status, "%s", r.body)
	require.Equal(t, "invalid_request", r.json(t)["error"])
}

// TestCrossSiteOrigin: a request with an Origin other than the catalog's
// own (or one allow-listed) is refused with 403 whatever its method and
// Content-Type; requests without Origin (every non-browser client) pass,
// unless the browser says Sec-Fetch-Site: cross-site.
func TestCrossSiteOrigin(t *testing.T) {
	b, _ := siteServer(t, server.Config{AllowedOrigins: []string{"https://console.example", "http://[::1]:9000/"}}, false)
	b.createNamespace(t, "ns")
	own := b.url // http://127.0.0.1:PORT
	port := strings.TrimPrefix(own, "http://127.0.0.1:")
	json := []string{"Content-Type", "application/json"}
	with := func(h ...string) []string { return append(append([]string{}, json...), h...) }
	const forbidden = "ForbiddenException"
	nsBody := func(level string) string { return `{"namespace":["` + level + `"]}` }
	cases := []siteCase{
		{name: "foreign Origin with application/json", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil1"),
			hdr: with("Origin", "https://evil.example"), want: 403, typ: forbidden},
		{name: "foreign Origin, GET", method: "GET", path: "/v1/wh/namespaces", hdr: []string{"Origin", "https://evil.example"}, want: 403, typ: forbidden},
		{name: "foreign Origin, DELETE", method: "DELETE", path: "/v1/wh/namespaces/ns", hdr: []string{"Origin", "https://evil.example"}, want: 403, typ: forbidden},
		{name: "foreign Origin, preflight", method: "OPTIONS", path: "/v1/wh/namespaces",
			hdr: []string{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"}, want: 403, typ: forbidden},
		{name: "foreign Origin, management", method: "POST", path: "/management/v1/warehouses", body: `{"name":"evil","location":"file:///tmp/evil"}`,
			hdr: with("Origin", "https://evil.example"), want: 403, typ: forbidden},
		{name: "foreign Origin, console", method: "GET", path: "/ui/", hdr: []string{"Origin", "https://evil.example"}, want: 403, typ: forbidden},
		{name: "Origin null", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil2"), hdr: with("Origin", "null"), want: 403, typ: forbidden},
		{name: "own host, other port", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil3"),
			hdr: with("Origin", "http://127.0.0.1:1"), want: 403, typ: forbidden},
		{name: "own host, https", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil4"),
			hdr: with("Origin", "https://127.0.0.1:"+port), want: 403, typ: forbidden},
		{name: "localhost is another origin than 127.0.0.1", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil5"),
			hdr: with("Origin", "http://localhost:"+port), want: 403, typ: forbidden},
		{name: "allow-listed origin, other port", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil6"),
			hdr: with("Origin", "https://console.example:8443"), want: 403, typ: forbidden},
		{name: "two Origin headers", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil7"),
			hdr: with("Origin", own, "Origin", "https://evil.example"), want: 403, typ: forbidden},
		{name: "no Origin, Sec-Fetch-Site cross-site", method: "POST", path: "/v1/wh/namespaces", body: nsBody("evil8"),
			hdr: with("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"), want: 403, typ: forbidden},
		{name: "no Origin, cross-site subresource GET", method: "GET", path: "/v1/config",
			hdr: []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "script"}, want: 403, typ: forbidden},

		{name: "own origin", method: "POST", path: "/v1/wh/namespaces", body: nsBody("own"), hdr: with("Origin", own), want: 200},
		{name: "own origin with the default port spelled out", method: "GET", path: "/v1/config",
			host: "localhost", hdr: []string{"Origin", "http://localhost:80"}, want: 200},
		{name: "own origin behind a TLS proxy", method: "GET", path: "/v1/config",
			host: "localhost", hdr: []string{"Origin", "https://localhost", "X-Forwarded-Proto", "https"}, want: 200},
		{name: "allow-listed origin", method: "POST", path: "/v1/wh/namespaces", body: nsBody("listed"),
			hdr: with("Origin", "https://console.example"), want: 200},
		{name: "allow-listed IPv6 origin", method: "GET", path: "/v1/config", hdr: []string{"Origin", "http://[::1]:9000"}, want: 200},
		{name: "no Origin", method: "POST", path: "/v1/wh/namespaces", body: nsBody("plain"), hdr: json, want: 200},
		{name: "no Origin, same-origin fetch", method: "GET", path: "/v1/config", hdr: []string{"Sec-Fetch-Site", "same-origin"}, want: 200},
		{name: "link to the console from another site", method: "GET", path: "/ui/",
			hdr: []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}, want: 200},
		{name: "health probe", method: "GET", path: "/healthz", want: 200},
	}
	runSiteCases(t, b, cases)
	for _, level := range []string{"evil1", "evil2", "evil3", "evil4", "evil5", "evil6", "evil7", "evil8"} {
		require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/"+level, nil).status, "namespace %s was created", level)
	}
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/ns", nil).status)
	require.Equal(t, 404, b.do(t, "GET", "/management/v1/warehouses/evil", nil).status)
}

// TestCrossSiteHost: with authentication off only loopback Host values are
// answered, so that a page whose host name was rebound to 127.0.0.1 (and is
// thereby same-origin with the catalog) gets nothing; --allowed-hosts adds
// names. Probes are exempt, /metrics is not.
func TestCrossSiteHost(t *testing.T) {
	b := setup(t, "sqlite")
	const forbidden = "ForbiddenException"
	rebound := "rebind.evil.example:8181"
	runSiteCases(t, b, []siteCase{
		{name: "rebinding Host, GET", method: "GET", path: "/v1/config", host: rebound, want: 403, typ: forbidden},
		{name: "rebinding Host, same-origin POST", method: "POST", path: "/v1/wh/namespaces", body: `{"namespace":["rebound"]}`,
			host: rebound, hdr: []string{"Content-Type", "application/json", "Origin", "http://" + rebound}, want: 403, typ: forbidden},
		{name: "rebinding Host, console", method: "GET", path: "/ui/config.json", host: rebound, want: 403, typ: forbidden},
		{name: "rebinding Host, metrics", method: "GET", path: "/metrics", host: rebound, want: 403, typ: forbidden},
		{name: "a name ending in localhost", method: "GET", path: "/v1/config", host: "evil-localhost:8181", want: 403, typ: forbidden},
		{name: "a non-loopback address", method: "GET", path: "/v1/config", host: "192.168.1.10:8181", want: 403, typ: forbidden},
		{name: "loopback address embedded in a name", method: "GET", path: "/v1/config", host: "127.0.0.1.evil.example", want: 403, typ: forbidden},
		{name: "rebinding Host, healthz", method: "GET", path: "/healthz", host: rebound, want: 200},
		{name: "rebinding Host, readyz", method: "GET", path: "/readyz", host: rebound, want: 200},
		{name: "localhost", method: "GET", path: "/v1/config", host: "localhost:8181", want: 200},
		{name: "LOCALHOST without port", method: "GET", path: "/v1/config", host: "LOCALHOST", want: 200},
		{name: "localhost.", method: "GET", path: "/v1/config", host: "localhost.:8181", want: 200},
		{name: "127.0.0.1", method: "GET", path: "/v1/config", host: "127.0.0.1:8181", want: 200},
		{name: "127.0.0.2", method: "GET", path: "/v1/config", host: "127.0.0.2", want: 200},
		{name: "[::1]", method: "GET", path: "/v1/config", host: "[::1]:8181", want: 200},
		{name: "[::1] without port", method: "GET", path: "/v1/config", host: "[::1]", want: 200},
		{name: "*.localhost", method: "GET", path: "/v1/config", host: "lake.localhost:8181", want: 200},
	})
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/rebound", nil).status)

	t.Run("allowed hosts", func(t *testing.T) {
		a, _ := siteServer(t, server.Config{AllowedHosts: []string{"catalog.internal", ".corp.example", "10.0.0.5"}}, false)
		runSiteCases(t, a, []siteCase{
			{name: "listed name", method: "GET", path: "/v1/config", host: "catalog.internal:8181", want: 200},
			{name: "listed name, POST", method: "POST", path: "/v1/wh/namespaces", body: `{"namespace":["internal"]}`,
				host: "Catalog.Internal", hdr: []string{"Content-Type", "application/json"}, want: 200},
			{name: "listed domain", method: "GET", path: "/v1/config", host: "corp.example", want: 200},
			{name: "listed domain, subdomain", method: "GET", path: "/v1/config", host: "lake.corp.example:443", want: 200},
			{name: "listed address", method: "GET", path: "/v1/config", host: "10.0.0.5:8181", want: 200},
			{name: "loopback stays accepted", method: "GET", path: "/v1/config", host: "localhost:8181", want: 200},
			{name: "other name", method: "GET", path: "/v1/config", host: "rebind.evil.example", want: 403, typ: forbidden},
			{name: "suffix without the dot", method: "GET", path: "/v1/config", host: "evilcorp.example", want: 403, typ: forbidden},
		})
	})
	t.Run("any host", func(t *testing.T) {
		a, _ := siteServer(t, server.Config{AllowedHosts: []string{"*"}}, false)
		runSiteCases(t, a, []siteCase{{name: "any", method: "GET", path: "/v1/config", host: "rebind.evil.example", want: 200}})
	})
	t.Run("auth on", func(t *testing.T) {
		// With authentication on a rebinding page has no token: the Host
		// is not checked (the request reaches authentication) ...
		a, _ := siteServer(t, server.Config{}, true)
		runSiteCases(t, a, []siteCase{
			{name: "other name", method: "GET", path: "/v1/config", host: "catalog.example", want: 401, typ: "NotAuthorizedException"},
		})
		// ... unless --allowed-hosts asks for it.
		a, _ = siteServer(t, server.Config{AllowedHosts: []string{"catalog.example"}}, true)
		runSiteCases(t, a, []siteCase{
			{name: "listed", method: "GET", path: "/v1/config", host: "catalog.example", want: 401, typ: "NotAuthorizedException"},
			{name: "other", method: "GET", path: "/v1/config", host: "rebind.evil.example", want: 403, typ: forbidden},
		})
	})
}

func TestParseCrossSiteLists(t *testing.T) {
	o, err := server.ParseAllowedOrigins(" https://Console.Example/ , http://127.0.0.1:3000,,http://[::1]")
	require.NoError(t, err)
	require.Equal(t, []string{"https://console.example:443", "http://127.0.0.1:3000", "http://[::1]:80"}, o)
	for _, bad := range []string{"console.example", "ftp://x", "https://x/path", "https://user@x", "null", "*"} {
		_, err := server.ParseAllowedOrigins(bad)
		require.Error(t, err, bad)
	}
	h, err := server.ParseAllowedHosts("Catalog.Internal:8181, .corp.example,[fd00::1],*")
	require.NoError(t, err)
	require.Equal(t, []string{"catalog.internal", ".corp.example", "fd00::1", "*"}, h)
	for _, bad := range []string{"http://x", "x/y", "*.corp.example", "user@x"} {
		_, err := server.ParseAllowedHosts(bad)
		require.Error(t, err, bad)
	}
}
