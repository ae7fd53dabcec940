package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/authn/secret"
	"github.com/lakehold/catalog/internal/signin"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// testClock is a settable clock shared by the token signer, the service
// and the sign-in gate of one test server.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// verifyCounter wraps secret.Verify: it counts verifications, the most
// that ran at once, and can hold each one for a while or until released.
type verifyCounter struct {
	calls, cur, peak atomic.Int32
	hold             time.Duration
	gate             chan struct{} // when set, each verification waits for a value
}

func (v *verifyCounter) verify(plain, encoded string) (bool, error) {
	v.calls.Add(1)
	c := v.cur.Add(1)
	defer v.cur.Add(-1)
	for p := v.peak.Load(); c > p && !v.peak.CompareAndSwap(p, c); p = v.peak.Load() {
	}
	if v.gate != nil {
		<-v.gate
	}
	time.Sleep(v.hold)
	return secret.Verify(plain, encoded)
}

type signInBundle struct {
	*bundle
	svc   *service.Service
	clock *testClock
	reg   *prometheus.Registry
}

// setupSignIn starts a catalog with authentication on whose token signer,
// service and sign-in gate all run on one test clock, verifying secrets
// through v.
func setupSignIn(t *testing.T, cfg signin.Config, v *verifyCounter, maxSession time.Duration) *signInBundle {
	t.Helper()
	st := openStore(t, "sqlite")
	clock := &testClock{t: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var svc *service.Service
	b, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: bytes.Repeat([]byte{7}, 32), Now: clock.Now,
		Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc.Admin().PrincipalGeneration(ctx, name)
		})})
	require.NoError(t, err)
	svc = service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Tokens: b, VerifySecret: v.verify,
		Now: clock.Now, MaxSessionAge: maxSession})
	cfg.Now = clock.Now
	reg := prometheus.NewRegistry()
	srv := server.New(svc, server.Config{Logger: quiet, Auth: authn.New(b, nil), SignIn: cfg, Registry: reg})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &signInBundle{bundle: &bundle{url: hs.URL, store: st, client: hs.Client()}, svc: svc, clock: clock, reg: reg}
}

// post sends a token request; safe in goroutines (no require).
func (b *signInBundle) post(form url.Values, headers ...string) (int, http.Header, map[string]any, error) {
	req, err := http.NewRequest("POST", b.url+"/v1/oauth/tokens", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", formType)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var body map[string]any
	err = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body, err
}

func clientCreds(id, secret string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}}
}

func (b *signInBundle) refused(reason string) float64 {
	mfs, _ := b.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "catalog_signin_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// TestSixthWrongSecretIsLockedOut: five wrong secrets in a row are 401;
// the sixth is 429 slow_down with Retry-After, answered without running
// argon2, as is the right secret until the lockout ends. Unknown client
// ids are locked out the same way.
func TestSixthWrongSecretIsLockedOut(t *testing.T) {
	v := &verifyCounter{}
	a := setupSignIn(t, signin.Config{}, v, 0)
	c, err := a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)

	for i := range 5 {
		status, _, body, err := a.post(clientCreds(c.ClientID, "wrong"))
		require.NoError(t, err)
		require.Equal(t, 401, status, "attempt %d: %v", i+1, body)
		require.Equal(t, "invalid_client", body["error"])
	}
	require.EqualValues(t, 5, v.calls.Load())
	status, h, body, err := a.post(clientCreds(c.ClientID, "wrong"))
	require.NoError(t, err)
	require.Equal(t, 429, status, "%v", body)
	require.Equal(t, "slow_down", body["error"])
	require.NotEmpty(t, body["error_description"])
	require.Equal(t, "1", h.Get("Retry-After"))
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.EqualValues(t, 5, v.calls.Load(), "a locked-out request ran argon2")
	// The right secret waits too, over HTTP Basic as well.
	status, h, _, _ = a.post(clientCreds(c.ClientID, c.ClientSecret))
	require.Equal(t, 429, status)
	require.NotEmpty(t, h.Get("Retry-After"))
	basic := base64.StdEncoding.EncodeToString([]byte(c.ClientID + ":" + c.ClientSecret))
	status, _, _, _ = a.post(url.Values{"grant_type": {"client_credentials"}}, "Authorization", "Basic "+basic)
	require.Equal(t, 429, status)
	require.EqualValues(t, 5, v.calls.Load())
	require.Equal(t, float64(3), a.refused("locked_out"))
	require.Equal(t, float64(5), a.refused("invalid_client"))

	// Once the lockout is over the right secret signs in and wipes the slate.
	a.clock.Add(time.Second)
	status, _, body, _ = a.post(clientCreds(c.ClientID, c.ClientSecret))
	require.Equal(t, 200, status, "%v", body)
	for range 4 {
		status, _, _, _ = a.post(clientCreds(c.ClientID, "wrong"))
		require.Equal(t, 401, status)
	}

	// An unknown client id: the same five failures, the same lockout.
	for range 5 {
		status, _, _, _ = a.post(clientCreds("lh-nosuchclient0000", "wrong"))
		require.Equal(t, 401, status)
	}
	calls := v.calls.Load()
	status, h, _, _ = a.post(clientCreds("lh-nosuchclient0000", "wrong"))
	require.Equal(t, 429, status)
	require.Equal(t, "1", h.Get("Retry-After"))
	require.Equal(t, calls, v.calls.Load())

	// A lockout doubles with each failure after it ends.
	a.clock.Add(time.Second)
	status, _, _, _ = a.post(clientCreds("lh-nosuchclient0000", "wrong"))
	require.Equal(t, 401, status)
	_, h, _, _ = a.post(clientCreds("lh-nosuchclient0000", "wrong"))
	require.Equal(t, "2", h.Get("Retry-After"))
}

// TestSourceAddressLockout: many client ids failing from one address lock
// the address out, the right credentials included.
func TestSourceAddressLockout(t *testing.T) {
	v := &verifyCounter{}
	a := setupSignIn(t, signin.Config{SourceMaxFailures: 4}, v, 0)
	c, err := a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	for i := range 4 {
		status, _, _, _ := a.post(clientCreds(fmt.Sprintf("lh-guess%011d", i), "wrong"))
		require.Equal(t, 401, status)
	}
	status, h, _, _ := a.post(clientCreds(c.ClientID, c.ClientSecret))
	require.Equal(t, 429, status)
	require.Equal(t, "1", h.Get("Retry-After"))
	require.EqualValues(t, 4, v.calls.Load())
}

// TestConcurrentSignInsAreBounded: however many bad sign-ins arrive at
// once, no more than the configured number of secrets are verified at a
// time; the others wait their turn.
func TestConcurrentSignInsAreBounded(t *testing.T) {
	const limit, n = 3, 24
	v := &verifyCounter{hold: 10 * time.Millisecond}
	a := setupSignIn(t, signin.Config{Concurrency: limit, Wait: time.Minute, MaxFailures: -1, SourceMaxFailures: -1}, v, 0)
	var wg sync.WaitGroup
	var unauthorized atomic.Int32
	for i := range n {
		wg.Go(func() {
			status, _, body, err := a.post(clientCreds(fmt.Sprintf("lh-flood%011d", i), "wrong"))
			if err != nil || status != 401 || body["error"] != "invalid_client" {
				t.Errorf("status %d, %v, %v", status, body, err)
				return
			}
			unauthorized.Add(1)
		})
	}
	wg.Wait()
	require.EqualValues(t, n, unauthorized.Load())
	require.EqualValues(t, n, v.calls.Load())
	require.EqualValues(t, limit, v.peak.Load(), "verifications at once")
}

// TestBusySignIn: a sign-in that finds no free verification slot within
// the wait is answered 503 temporarily_unavailable with Retry-After, as an
// OAuth error, and is not counted as a failure of the client.
func TestBusySignIn(t *testing.T) {
	v := &verifyCounter{gate: make(chan struct{})}
	a := setupSignIn(t, signin.Config{Concurrency: 1, Wait: 50 * time.Millisecond, MaxFailures: 1}, v, 0)
	first := make(chan int, 1)
	go func() {
		status, _, _, _ := a.post(clientCreds("lh-first000000000000", "wrong"))
		first <- status
	}()
	require.Eventually(t, func() bool { return v.cur.Load() == 1 }, 10*time.Second, time.Millisecond)
	status, h, body, err := a.post(clientCreds("lh-second00000000000", "wrong"))
	require.NoError(t, err)
	require.Equal(t, 503, status, "%v", body)
	require.Equal(t, "temporarily_unavailable", body["error"])
	require.Equal(t, "1", h.Get("Retry-After"))
	close(v.gate)
	require.Equal(t, 401, <-first)
	// MaxFailures is 1, yet the busy refusal did not lock the second id.
	status, _, _, _ = a.post(clientCreds("lh-second00000000000", "wrong"))
	require.Equal(t, 401, status)
	require.Equal(t, float64(1), a.refused("busy"))
}

// tokenClaims decodes a token's payload without checking it.
func tokenClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// TestExchangeSessionCap: token exchanges renew a session, keeping its
// auth_time, until it is MaxSessionAge old, and never issue a token that
// outlives it; then the exchange is refused with invalid_grant, and the
// Java client's fallback (the exchange again, with its credential in
// Basic auth) signs in to a new session.
func TestExchangeSessionCap(t *testing.T) {
	v := &verifyCounter{}
	a := setupSignIn(t, signin.Config{}, v, 12*time.Hour)
	c, err := a.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	t0 := a.clock.Now()

	status, _, body, err := a.post(clientCreds(c.ClientID, c.ClientSecret))
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", body)
	tok := body["access_token"].(string)
	claims := tokenClaims(t, tok)
	require.Equal(t, float64(t0.Unix()), claims["auth_time"])
	require.Equal(t, float64(t0.Unix()), claims["iat"])

	exchange := func(subject string, headers ...string) (int, map[string]any) {
		status, _, body, err := a.post(url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token": {subject}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
			"scope": {"catalog"}}, headers...)
		require.NoError(t, err)
		return status, body
	}
	// Refresh as the Java client does, shortly before each token expires.
	for a.clock.Now().Before(t0.Add(11*time.Hour + 40*time.Minute)) {
		a.clock.Add(50 * time.Minute)
		status, body := exchange(tok, "Authorization", "Bearer "+tok)
		require.Equal(t, 200, status, "at +%s: %v", a.clock.Now().Sub(t0), body)
		tok = body["access_token"].(string)
		claims := tokenClaims(t, tok)
		require.Equal(t, float64(t0.Unix()), claims["auth_time"], "the session start survives the exchange")
		require.Equal(t, float64(a.clock.Now().Unix()), claims["iat"])
		require.LessOrEqual(t, claims["exp"].(float64), float64(t0.Add(12*time.Hour).Unix()), "a token outlives the session")
		require.Equal(t, claims["exp"].(float64)-claims["iat"].(float64), body["expires_in"])
	}
	require.Equal(t, float64(t0.Add(12*time.Hour).Unix()), tokenClaims(t, tok)["exp"], "the last token ends with the session")
	require.Equal(t, 200, a.do(t, "GET", "/management/v1/warehouses", nil, "Authorization", "Bearer "+tok).status)

	// At the end of the session the (still accepted) token buys no other.
	a.clock.Add(20 * time.Minute)
	require.Equal(t, t0.Add(12*time.Hour), a.clock.Now())
	status, body = exchange(tok)
	require.Equal(t, 400, status)
	require.Equal(t, "invalid_grant", body["error"])
	require.Contains(t, body["error_description"], "maximum session age")
	require.Equal(t, float64(1), a.refused("session_expired"))

	// The Java client's fallback: the exchange with Basic client credentials
	// is a sign-in, to a new session.
	calls := v.calls.Load()
	basic := base64.StdEncoding.EncodeToString([]byte(c.ClientID + ":" + c.ClientSecret))
	status, body = exchange(tok, "Authorization", "Basic "+basic)
	require.Equal(t, 200, status, "%v", body)
	require.Equal(t, calls+1, v.calls.Load(), "the credentials were checked")
	fresh := tokenClaims(t, body["access_token"].(string))
	require.Equal(t, float64(a.clock.Now().Unix()), fresh["auth_time"])
	// Wrong credentials on an exchange fail as a sign-in does.
	wrong := base64.StdEncoding.EncodeToString([]byte(c.ClientID + ":wrong"))
	status, body = exchange(tok, "Authorization", "Basic "+wrong)
	require.Equal(t, 401, status)
	require.Equal(t, "invalid_client", body["error"])
}

// The refusal metric is registered with every reason from the start.
func TestSignInMetricRegistered(t *testing.T) {
	a := setupSignIn(t, signin.Config{}, &verifyCounter{}, 0)
	n, err := testutil.GatherAndCount(a.reg, "catalog_signin_refused_total")
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Equal(t, float64(0), a.refused("locked_out"))
}
