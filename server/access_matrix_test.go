package server_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// keycloakIssuer returns the issuer of the test realm served by the real
// Keycloak that scripts/test.sh starts (scripts/keycloak-start.sh). Without
// it the test is skipped, or fails under CATALOG_TEST_REQUIRE_KEYCLOAK=1.
func keycloakIssuer(t *testing.T) string {
	t.Helper()
	iss := os.Getenv("KEYCLOAK_ISSUER")
	if iss == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_KEYCLOAK") == "1" {
			t.Fatal("KEYCLOAK_ISSUER is not set but CATALOG_TEST_REQUIRE_KEYCLOAK=1")
		}
		t.Skip("needs a Keycloak: run through scripts/test.sh or set KEYCLOAK_ISSUER (scripts/keycloak-start.sh)")
	}
	return iss
}

// keycloakToken asks the provider for an access token with form.
func keycloakToken(t *testing.T, iss string, form url.Values) string {
	t.Helper()
	resp, err := http.PostForm(iss+"/protocol/openid-connect/token", form)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, 200, resp.StatusCode, "keycloak: %s", body)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.Unmarshal(body, &tok))
	return tok.AccessToken
}

func userToken(t *testing.T, iss, user string) string {
	return keycloakToken(t, iss, url.Values{"grant_type": {"password"}, "client_id": {"cli"}, "client_secret": {"cli-secret"},
		"username": {user}, "password": {user + "-password"}})
}

func serviceAccountToken(t *testing.T, iss, client string) string {
	return keycloakToken(t, iss, url.Values{"grant_type": {"client_credentials"}, "client_id": {client}, "client_secret": {client + "-secret"}})
}

// rogueToken is well-formed and names the right issuer and audience, but
// is signed by a key the provider never published.
func rogueToken(t *testing.T, iss string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "not-a-keycloak-key"))
	require.NoError(t, err)
	now := time.Now()
	tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: iss, Subject: "intruder", Audience: jwt.Audience{"lakehold"},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute))}).
		Claims(map[string]any{"groups": []string{"platform"}}).Serialize()
	require.NoError(t, err)
	return tok
}

// matrixCallers are the eight kinds of caller, each with its token.
type matrixCallers struct {
	anonymous, expired, wrongAudience, rogue string // all refused: 401
	reader, writer, nsAdmin, admin           string
}

func newMatrixCallers(t *testing.T, iss string) matrixCallers {
	c := matrixCallers{
		expired:       serviceAccountToken(t, iss, "short-lived"), // lives one second
		wrongAudience: serviceAccountToken(t, iss, "elsewhere"),
		rogue:         rogueToken(t, iss),
		reader:        userToken(t, iss, "alice"),
		writer:        userToken(t, iss, "erin"),
		nsAdmin:       userToken(t, iss, "sam"),
		admin:         userToken(t, iss, "pat"),
	}
	time.Sleep(2500 * time.Millisecond) // let the short-lived token expire (test leeway: 1 s)
	return c
}

// matrixServer starts a catalog with OIDC against Keycloak, built-in
// tokens and RBAC, and grants the roles the matrix expects.
func matrixServer(t *testing.T, backend, iss string) (*bundle, *service.AuditLog, *syncBuffer) {
	t.Helper()
	st := openStore(t, backend)
	logs := &syncBuffer{}
	quiet := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: quiet})
	t.Cleanup(audit.Close)
	var svc *service.Service
	builtin, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: []byte(strings.Repeat("k", 32)),
		Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc.Admin().PrincipalGeneration(ctx, name)
		})})
	require.NoError(t, err)
	// The catalog's own leeway is 30 s; 1 s here lets a one-second
	// Keycloak token expire within the test.
	oidc, err := authn.NewOIDC(context.Background(), authn.OIDCConfig{Issuer: iss, Audience: "lakehold", Leeway: time.Second})
	require.NoError(t, err)
	sealer, err := credentials.NewSealer([]byte(strings.Repeat("s", 32)))
	require.NoError(t, err)
	signer := vending.New(sealer)
	svc = service.New(st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st), Tokens: builtin, Sealer: sealer, Logger: quiet, Audit: audit,
		Signer: signer,
		Events: service.EventOptions{Retention: time.Hour}, ReportsRetention: time.Hour})
	ctx := localCtx()
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+filepath.Join(t.TempDir(), "wh"), nil)
	require.NoError(t, err)
	grantMatrixRoles(t, svc)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet, Auth: authn.New(builtin, oidc)}))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, store: st, client: hs.Client()}, audit, logs
}

func grantMatrixRoles(t *testing.T, svc *service.Service) {
	t.Helper()
	ctx := localCtx()
	sales := service.Resource{Kind: service.ResourceNamespace, Warehouse: "wh", Namespace: []string{"sales"}}
	read := []service.Privilege{service.PrivNamespaceList, service.PrivTableList, service.PrivTableReadMetadata,
		service.PrivTableReadData, service.PrivViewRead}
	write := append(append([]service.Privilege{}, read...), service.PrivTableCreate, service.PrivTableWriteMetadata,
		service.PrivTableWriteData, service.PrivViewCreate, service.PrivViewReplace)
	all := append(append([]service.Privilege{}, write...), service.PrivNamespaceCreate, service.PrivNamespaceDrop,
		service.PrivNamespaceProperties, service.PrivTableDrop, service.PrivViewDrop)
	for _, r := range []struct {
		role, group string
		privs       []service.Privilege
	}{{"reader", "analysts", read}, {"writer", "engineers", write}, {"steward", "stewards", all}} {
		_, err := svc.Admin().CreateRole(ctx, r.role, "")
		require.NoError(t, err)
		for _, p := range r.privs {
			require.NoError(t, svc.Admin().GrantPrivilege(ctx, r.role, service.Grant{Privilege: p, On: sales}))
		}
		require.NoError(t, svc.Admin().AssignRole(ctx, r.role, service.Assignee{Kind: "group", Name: r.group}))
	}
	require.NoError(t, svc.Admin().EnsureBootstrapAdmin(ctx, service.Assignee{Kind: "group", Name: "platform"}))
}

// matrixFixture makes, as the server admin, the objects a cell needs.
type matrixFixture struct {
	t     *testing.T
	b     *bundle
	admin string
}

func (f *matrixFixture) do(method, path string, body any) response {
	f.t.Helper()
	return f.b.do(f.t, method, path, body, "Authorization", "Bearer "+f.admin)
}

func (f *matrixFixture) must(status int, method, path string, body any) response {
	f.t.Helper()
	r := f.do(method, path, body)
	require.Equal(f.t, status, r.status, "fixture %s %s: %s", method, path, r.body)
	return r
}

func (f *matrixFixture) base() {
	f.must(200, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"sales"}})
	f.must(200, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"hr"}})
	f.must(200, "POST", "/v1/wh/namespaces/hr/tables", map[string]any{"name": "secret", "schema": rawJSON(testSchema)})
	r := f.must(200, "POST", "/v1/wh/namespaces/hr/views", viewBody("secretv"))
	_ = r
	f.must(200, "POST", "/management/v1/warehouses/wh/namespaces/hr/functions", functionBody("secretf"))
}

// prepare makes the fresh objects of cell n that rc refers to.
func (f *matrixFixture) prepare(rc routeCase, n int) {
	for _, need := range needsOf(rc, n) {
		switch need {
		case "t":
			f.must(200, "POST", "/v1/wh/namespaces/sales/tables", map[string]any{"name": fmt.Sprintf("t%d", n), "schema": rawJSON(testSchema)})
		case "x":
			f.must(200, "POST", "/v1/wh/namespaces/sales/tables", map[string]any{"name": fmt.Sprintf("x%d", n), "schema": rawJSON(testSchema),
				"properties": map[string]string{"format-version": "4"}})
		case "v":
			f.must(200, "POST", "/v1/wh/namespaces/sales/views", viewBody(fmt.Sprintf("v%d", n)))
		case "f":
			f.must(200, "POST", "/management/v1/warehouses/wh/namespaces/sales/functions", functionBody(fmt.Sprintf("f%d", n)))
		case "c":
			f.must(200, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"sales", fmt.Sprintf("c%d", n)}})
		case "w":
			f.must(200, "POST", "/management/v1/warehouses", map[string]any{"name": fmt.Sprintf("w%d", n), "location": "file://" + f.t.TempDir()})
			f.must(200, "PUT", fmt.Sprintf("/management/v1/warehouses/w%d/storage-profile", n), s3Profile())
		case "r":
			f.must(200, "POST", "/management/v1/roles", map[string]any{"name": fmt.Sprintf("r%d", n)})
			f.must(204, "POST", fmt.Sprintf("/management/v1/roles/r%d/grants", n), grantBody(nil, nil, n))
			f.must(204, "POST", fmt.Sprintf("/management/v1/roles/r%d/assignments", n), map[string]any{"kind": "group", "name": "analysts"})
		case "p":
			f.must(201, "POST", "/management/v1/principals", map[string]any{"name": fmt.Sprintf("p%d", n)})
		default:
			f.t.Fatalf("unknown fixture %q", need)
		}
	}
}

// needsOf lists the fresh objects the request of cell n names: t<n>
// table, x<n> v4 table, v<n> view, f<n> function, c<n> child namespace, w<n> warehouse,
// r<n> role, p<n> principal.
func needsOf(rc routeCase, n int) []string {
	text := rc.path(n)
	if rc.body != nil && !strings.HasPrefix(rc.op, "register") {
		data, _ := json.Marshal(rc.body(nil, nil, n))
		text += string(data)
	}
	var out []string
	for _, k := range []string{"t", "x", "v", "f", "c", "w", "r", "p"} {
		for _, form := range []string{"/%s%d", `"%s%d"`, "%%1F%s%d"} {
			if strings.Contains(text, fmt.Sprintf(form, k, n)) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// snapshotOf returns a matrixEnv.snapshotOf: it commits snapshot n to
// table t<n> (once per cell: the refused callers share theirs) and
// returns its id, for a report that must name one of its table's.
func (f *matrixFixture) snapshotOf() func(t *testing.T, n int) int64 {
	done := map[int]bool{}
	return func(_ *testing.T, n int) int64 {
		if !done[n] {
			commitSnapshots(f.t, f.b, "wh", "sales", fmt.Sprintf("t%d", n), []int64{int64(n)}, "Authorization", "Bearer "+f.admin)
			done[n] = true
		}
		return int64(n)
	}
}

// metadataOfDropped creates table d<n>, drops it from the catalog (files
// kept) and returns its metadata location, ready to be registered.
func (f *matrixFixture) metadataOfDropped(kind string, n int) string {
	f.t.Helper()
	var r response
	name := fmt.Sprintf("d%d", n)
	if kind == "views" {
		r = f.must(200, "POST", "/v1/wh/namespaces/sales/views", viewBody(name))
	} else {
		r = f.must(200, "POST", "/v1/wh/namespaces/sales/tables", map[string]any{"name": name, "schema": rawJSON(testSchema)})
	}
	loc, _ := r.json(f.t)["metadata-location"].(string)
	require.NotEmpty(f.t, loc)
	f.must(204, "DELETE", "/v1/wh/namespaces/sales/"+kind+"/"+name, nil)
	return loc
}

// TestAccessMatrix calls every route of the API as eight kinds of caller
// with tokens from a real Keycloak and checks each cell's status: no token,
// an expired token, a token for another audience and a token signed by an
// unknown key are 401 everywhere; reader, writer, namespace admin and
// server admin get what their grants allow, 404 where they may not see.
func TestAccessMatrix(t *testing.T) {
	iss := keycloakIssuer(t)
	callers := newMatrixCallers(t, iss)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, audit, logs := matrixServer(t, backend, iss)
			f := &matrixFixture{t: t, b: b, admin: callers.admin}
			env := &matrixEnv{
				metadataOfDropped: func(_ *testing.T, n int) string { return f.metadataOfDropped("tables", n) },
				viewMetaOfDropped: func(_ *testing.T, n int) string { return f.metadataOfDropped("views", n) },
				snapshotOf:        f.snapshotOf(),
			}
			f.base()
			n := 1000 // keeps names like v<n> apart from path parts like /v1/
			for _, rc := range matrixRoutes() {
				label := rc.op
				if rc.name != "" {
					label += "/" + rc.name
				}
				// The refused callers share one prepared cell: nothing they
				// send may change it.
				n++
				f.prepare(rc, n)
				for who, tok := range map[string]string{"no-token": callers.anonymous, "expired": callers.expired,
					"wrong-audience": callers.wrongAudience, "unknown-key": callers.rogue} {
					checkCell(t, b, rc, env, n, label, who, tok, 401)
				}
				for _, c := range []struct {
					who, tok string
					want     int
				}{{"reader", callers.reader, rc.want.reader}, {"writer", callers.writer, rc.want.writer},
					{"namespace-admin", callers.nsAdmin, rc.want.nsAdmin}, {"server-admin", callers.admin, rc.want.admin}} {
					n++
					f.prepare(rc, n)
					checkCell(t, b, rc, env, n, label, c.who, c.tok, c.want)
				}
			}
			noTokensLeak(t, b, audit, logs, callers)
		})
	}
}

func checkCell(t *testing.T, b *bundle, rc routeCase, env *matrixEnv, n int, label, who, tok string, want int) {
	t.Helper()
	var body any
	if rc.body != nil {
		body = rc.body(t, env, n)
	}
	var headers []string
	if tok != "" {
		headers = []string{"Authorization", "Bearer " + tok}
	}
	r := b.do(t, rc.method, rc.path(n), body, headers...)
	if r.status != want {
		t.Errorf("%s as %s: status %d, want %d: %.200s", label, who, r.status, want, r.body)
		return
	}
	if want == 401 {
		require.Contains(t, r.header.Get("WWW-Authenticate"), "Bearer", "%s as %s", label, who)
	}
	if rc.method != "HEAD" && want >= 400 {
		r.errorOf(t)
	}
}

// s3Profile is a storage profile the catalog accepts without reaching S3.
func s3Profile() map[string]any {
	return map[string]any{"type": "s3", "region": "us-east-1", "endpoint": "http://127.0.0.1:1", "path-style-access": true,
		"role-arn": "arn:aws:iam::000000000000:role/Matrix", "access-key-id": "matrix", "secret-access-key": "matrix-secret"}
}

// noTokensLeak looks for every token the matrix sent in the audit rows, the
// logs (at debug level) and the metrics: none may appear, whole or as its
// signature.
func noTokensLeak(t *testing.T, b *bundle, audit *service.AuditLog, logs *syncBuffer, c matrixCallers) {
	t.Helper()
	audit.Flush(context.Background())
	events, _, err := b.store.ListAudit(context.Background(), store.AuditFilter{}, store.Page{Size: 100000})
	require.NoError(t, err)
	require.NotEmpty(t, events, "the matrix's mutating requests are audited")
	rows, err := json.Marshal(events)
	require.NoError(t, err)
	metrics := b.do(t, "GET", "/metrics", nil)
	require.Equal(t, 200, metrics.status)
	for _, tok := range []string{c.expired, c.wrongAudience, c.rogue, c.reader, c.writer, c.nsAdmin, c.admin} {
		sig := tok[strings.LastIndex(tok, ".")+1:]
		for where, text := range map[string]string{"audit rows": string(rows), "logs": logs.String(), "metrics": string(metrics.body)} {
			require.NotContains(t, text, sig, "a token signature appears in the %s", where)
		}
	}
}
