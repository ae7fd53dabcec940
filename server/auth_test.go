package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type authBundle struct {
	*bundle
	svc  *service.Service
	logs *syncBuffer
}

// setupAuth starts a catalog with authentication on (built-in tokens
// only), logging everything at Debug into logs.
func setupAuth(t *testing.T, backend string) *authBundle {
	t.Helper()
	return authOver(t, openStore(t, backend))
}

// authOver is setupAuth over a store the caller opened.
func authOver(t *testing.T, st store.Store) *authBundle {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var svc *service.Service
	b, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: bytes.Repeat([]byte{7}, 32),
		Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc.Admin().PrincipalGeneration(ctx, name)
		})})
	require.NoError(t, err)
	svc = service.New(st, storage.NewProvider(), service.Options{Logger: log, Tokens: b})
	_, err = svc.CreateWarehouse(context.Background(), "wh", "file://"+filepath.Join(t.TempDir(), "wh"), nil)
	require.NoError(t, err)
	srv := server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log, Auth: authn.New(b, nil)})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &authBundle{bundle: &bundle{url: hs.URL, store: st, client: hs.Client()}, svc: svc, logs: logs}
}

type generationsFunc func(ctx context.Context, name string) (string, int64, error)

func (f generationsFunc) PrincipalGeneration(ctx context.Context, name string) (string, int64, error) {
	return f(ctx, name)
}

func localCtx() context.Context {
	return identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})
}

const formType = "application/x-www-form-urlencoded"

func (a *authBundle) token(t *testing.T, id, secret string) response {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}}
	return a.do(t, "POST", "/v1/oauth/tokens", form.Encode(), "Content-Type", formType)
}

func (a *authBundle) accessToken(t *testing.T, id, secret string) string {
	t.Helper()
	r := a.token(t, id, secret)
	require.Equal(t, 200, r.status, "%s", r.body)
	return r.json(t)["access_token"].(string)
}

func TestAuthRequired(t *testing.T) {
	a := setupAuth(t, "sqlite")
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		require.Equal(t, 200, a.do(t, "GET", path, nil).status, path)
	}
	for _, path := range []string{"/v1/config", "/v1/wh/namespaces", "/management/v1/principals", "/management/v1/warehouses"} {
		r := a.do(t, "GET", path, nil)
		require.Equal(t, 401, r.status, path)
		typ, _ := r.errorOf(t)
		require.Equal(t, "NotAuthorizedException", typ)
		require.Equal(t, `Bearer realm="lakehold"`, r.header.Get("WWW-Authenticate"))
	}
	bad := "Bearer eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJsYWtlaG9sZCJ9.c2ln"
	r := a.do(t, "GET", "/v1/config", nil, "Authorization", bad)
	require.Equal(t, 401, r.status)
	require.Equal(t, `Bearer realm="lakehold", error="invalid_token"`, r.header.Get("WWW-Authenticate"))
	_, msg := r.errorOf(t)
	require.Equal(t, "Not authorized: invalid token", msg)
	require.NotContains(t, string(r.body), "eyJ")
	// GET on the token path is not public.
	require.Equal(t, 401, a.do(t, "GET", "/v1/oauth/tokens", nil).status)
}

func TestTokenEndpoint(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testTokenEndpoint(t, backend) })
	}
}

func testTokenEndpoint(t *testing.T, backend string) {
	a := setupAuth(t, backend)
	c, err := a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)

	r := a.token(t, c.ClientID, c.ClientSecret)
	require.Equal(t, 200, r.status, "%s", r.body)
	body := r.json(t)
	require.Equal(t, "bearer", body["token_type"])
	require.Equal(t, float64(3600), body["expires_in"])
	require.Equal(t, "urn:ietf:params:oauth:token-type:access_token", body["issued_token_type"])
	require.Equal(t, "catalog", body["scope"])
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	tok := body["access_token"].(string)
	require.Equal(t, 200, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok).status)

	// HTTP Basic, as some clients send it (form-urlencoded inside).
	basic := base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ClientID) + ":" + url.QueryEscape(c.ClientSecret)))
	r = a.do(t, "POST", "/v1/oauth/tokens", "grant_type=client_credentials", "Content-Type", formType, "Authorization", "Basic "+basic)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Nil(t, r.json(t)["scope"], "no scope asked, none echoed")

	oauthErr := func(r response, status int, code string) {
		t.Helper()
		require.Equal(t, status, r.status, "%s", r.body)
		require.Equal(t, code, r.json(t)["error"], "%s", r.body)
	}
	oauthErr(a.token(t, c.ClientID, c.ClientSecret+"x"), 401, "invalid_client")
	oauthErr(a.token(t, "lh-unknown", c.ClientSecret), 401, "invalid_client")
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", "grant_type=client_credentials&client_id="+c.ClientID, "Content-Type", formType), 401, "invalid_client")
	wrongBasic := base64.StdEncoding.EncodeToString([]byte(c.ClientID + ":nope"))
	r = a.do(t, "POST", "/v1/oauth/tokens", "grant_type=client_credentials", "Content-Type", formType, "Authorization", "Basic "+wrongBasic)
	oauthErr(r, 401, "invalid_client")
	require.Equal(t, `Basic realm="lakehold"`, r.header.Get("WWW-Authenticate"))
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", "grant_type=password&client_id=a&client_secret=b", "Content-Type", formType), 400, "unsupported_grant_type")
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", "client_id=a&client_secret=b", "Content-Type", formType), 400, "invalid_request")
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", `{"grant_type":"client_credentials"}`), 400, "invalid_request")
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", "grant_type=client_credentials&grant_type=client_credentials", "Content-Type", formType), 400, "invalid_request")
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", "grant_type=client_credentials&scope=%22bad%22&client_id=a&client_secret=b", "Content-Type", formType), 400, "invalid_scope")

	// Token exchange, as the Java client refreshes: a valid token buys a new one.
	exchange := func(subject string) response {
		form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subject},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "scope": {"catalog"}}
		return a.do(t, "POST", "/v1/oauth/tokens", form.Encode(), "Content-Type", formType)
	}
	r = exchange(tok)
	require.Equal(t, 200, r.status, "%s", r.body)
	refreshed := r.json(t)["access_token"].(string)
	require.NotEqual(t, tok, refreshed)
	require.Equal(t, 200, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+refreshed).status)
	oauthErr(exchange("a.b.c"), 400, "invalid_grant")
	oauthErr(a.do(t, "POST", "/v1/oauth/tokens", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange", "Content-Type", formType), 400, "invalid_request")

	// Rotation: the old secret and the tokens issued under it stop working.
	rot, err := a.svc.Admin().RotatePrincipalSecret(localCtx(), "etl")
	require.NoError(t, err)
	require.Equal(t, c.ClientID, rot.ClientID)
	require.NotEqual(t, c.ClientSecret, rot.ClientSecret)
	oauthErr(a.token(t, c.ClientID, c.ClientSecret), 401, "invalid_client")
	require.Equal(t, 401, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok).status)
	require.Equal(t, 401, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+refreshed).status)
	oauthErr(exchange(tok), 400, "invalid_grant")
	tok2 := a.accessToken(t, rot.ClientID, rot.ClientSecret)
	require.Equal(t, 200, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok2).status)

	// Deletion revokes, and a namesake created later does not inherit tokens.
	require.NoError(t, a.svc.Admin().DeletePrincipal(localCtx(), "etl"))
	require.Equal(t, 401, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok2).status)
	oauthErr(a.token(t, rot.ClientID, rot.ClientSecret), 401, "invalid_client")
	_, err = a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	require.Equal(t, 401, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok2).status)

	// Neither secrets nor tokens reach the log.
	logs := a.logs.String()
	require.Contains(t, logs, "authentication failed", "the debug log was captured")
	for _, s := range []string{c.ClientSecret, rot.ClientSecret, tok, tok2, refreshed} {
		require.NotContains(t, logs, s)
	}
}

func TestPrincipalsManagementAPI(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			a := setupAuth(t, backend)
			admin, err := a.svc.Admin().CreatePrincipal(localCtx(), "admin")
			require.NoError(t, err)
			auth := []string{"Authorization", "Bearer " + a.accessToken(t, admin.ClientID, admin.ClientSecret)}

			r := a.do(t, "POST", "/management/v1/principals", map[string]any{"name": "spark"}, auth...)
			require.Equal(t, 201, r.status, "%s", r.body)
			created := r.json(t)
			require.Equal(t, "spark", created["name"])
			secret := created["client-secret"].(string)
			require.Len(t, secret, 43)
			a.accessToken(t, created["client-id"].(string), secret)

			r = a.do(t, "POST", "/management/v1/principals", map[string]any{"name": "spark"}, auth...)
			require.Equal(t, 409, r.status)
			r = a.do(t, "POST", "/management/v1/principals", map[string]any{"name": "bad name"}, auth...)
			require.Equal(t, 400, r.status)

			r = a.do(t, "GET", "/management/v1/principals/spark", nil, auth...)
			require.Equal(t, 200, r.status)
			require.NotContains(t, string(r.body), secret)
			require.Equal(t, float64(1), r.json(t)["secret-generation"])

			r = a.do(t, "GET", "/management/v1/principals?pageSize=1", nil, auth...)
			require.Equal(t, 200, r.status)
			page := r.json(t)
			require.Len(t, page["principals"], 1)
			r = a.do(t, "GET", "/management/v1/principals?pageSize=1&pageToken="+url.QueryEscape(page["next-page-token"].(string)), nil, auth...)
			require.Equal(t, "spark", r.json(t)["principals"].([]any)[0].(map[string]any)["name"])
			require.Nil(t, r.json(t)["next-page-token"])

			r = a.do(t, "POST", "/management/v1/principals/spark/rotate", nil, auth...)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.NotEqual(t, secret, r.json(t)["client-secret"])
			r = a.do(t, "GET", "/management/v1/principals/spark", nil, auth...)
			require.Equal(t, float64(2), r.json(t)["secret-generation"])

			require.Equal(t, 204, a.do(t, "DELETE", "/management/v1/principals/spark", nil, auth...).status)
			r = a.do(t, "GET", "/management/v1/principals/spark", nil, auth...)
			require.Equal(t, 404, r.status)
			require.Equal(t, 404, a.do(t, "DELETE", "/management/v1/principals/spark", nil, auth...).status)
			require.NotContains(t, a.logs.String(), secret)
		})
	}
}

func TestTokenEndpointAuthOff(t *testing.T) {
	b := setup(t, "sqlite")
	r := b.do(t, "POST", "/v1/oauth/tokens", "grant_type=client_credentials&client_id=a&client_secret=b", "Content-Type", formType)
	require.Equal(t, 400, r.status)
	require.Equal(t, map[string]any{"error": "invalid_request", "error_description": "authentication is not enabled on this catalog"}, r.json(t))
	// With authentication off every other route stays open.
	require.Equal(t, 200, b.do(t, "GET", "/v1/config", nil).status)
}

// TestGenerationCacheBoundsRevocation: a rotation made through another
// replica's service reaches this replica within the cache TTL.
func TestGenerationCacheBoundsRevocation(t *testing.T) {
	a := setupAuth(t, "sqlite")
	c, err := a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	tok := a.accessToken(t, c.ClientID, c.ClientSecret)
	require.Equal(t, 200, a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok).status)
	// A second service over the same store stands in for another replica.
	other := service.New(a.store, storage.NewProvider(), service.Options{})
	_, err = other.Admin().RotatePrincipalSecret(localCtx(), "etl")
	require.NoError(t, err)
	deadline := time.Now().Add(authn.DefaultGenerationTTL + 2*time.Second)
	for a.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer "+tok).status != 401 {
		require.True(t, time.Now().Before(deadline), "old token still accepted after the cache TTL")
		time.Sleep(250 * time.Millisecond)
	}
}

func TestPrincipalNamesInLogsOnly(t *testing.T) {
	a := setupAuth(t, "sqlite")
	c, err := a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	tok := a.accessToken(t, c.ClientID, c.ClientSecret)
	require.Equal(t, 404, a.do(t, "GET", "/v1/wh/namespaces/nope", nil, "Authorization", "Bearer "+tok).status)
	require.True(t, strings.Contains(a.logs.String(), `"principal":"builtin:etl"`), "request logs name the principal")
}

type failingAuth struct{ err error }

func (f failingAuth) Authenticate(context.Context, string) (identity.Principal, error) {
	return identity.Principal{}, f.err
}

// TestAuthUnavailable: a token that cannot be checked now (database or
// provider down) is 503 with Retry-After, not 401: the client retries
// instead of dropping its credentials.
func TestAuthUnavailable(t *testing.T) {
	st := openStore(t, "sqlite")
	svc := service.New(st, storage.NewProvider(), service.Options{})
	hs := httptest.NewServer(server.New(svc, server.Config{Auth: failingAuth{fmt.Errorf("%w: db down", authn.ErrUnavailable)}}))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, client: hs.Client()}
	r := b.do(t, "GET", "/v1/config", nil, "Authorization", "Bearer x.y.z")
	require.Equal(t, 503, r.status)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	typ, msg := r.errorOf(t)
	require.Equal(t, "ServiceUnavailableException", typ)
	require.NotContains(t, msg, "db down")
}

// The console's static files load without a token (a person signs in from
// them); everything they call still needs one.
func TestConsoleFilesArePublicWithAuthOn(t *testing.T) {
	a := setupAuth(t, "sqlite")
	r := a.do(t, "GET", "/ui/", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r = a.do(t, "POST", "/ui/", nil)
	require.NotEqual(t, 200, r.status)
	r = a.do(t, "GET", "/management/v1/warehouses", nil)
	require.Equal(t, 401, r.status, "%s", r.body)
}
