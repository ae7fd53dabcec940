package authn

// These tests run against an OIDC issuer served by httptest for which the
// test signs tokens itself (discovery document and JWKS). The test against
// a real provider is the Keycloak one in the integration suite.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lakehold/catalog/internal/identity"
)

type testIssuer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys map[string]*rsa.PrivateKey // published keys by kid
	jwks int                        // JWKS requests served
}

func newTestIssuer(t testing.TB) *testIssuer {
	ti := &testIssuer{keys: map[string]*rsa.PrivateKey{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": ti.srv.URL, "jwks_uri": ti.srv.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256", "HS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		ti.mu.Lock()
		defer ti.mu.Unlock()
		ti.jwks++
		var set jose.JSONWebKeySet
		for kid, k := range ti.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"})
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	ti.srv = httptest.NewServer(mux)
	t.Cleanup(ti.srv.Close)
	ti.addKey(t, "k1")
	return ti
}

func (ti *testIssuer) addKey(t testing.TB, kid string) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ti.mu.Lock()
	ti.keys[kid] = k
	ti.mu.Unlock()
	return k
}

func (ti *testIssuer) jwksCount() int {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return ti.jwks
}

// sign signs claims with key under kid and alg.
func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newOIDC(t testing.TB, ti *testIssuer, clock *fakeClock) *OIDC {
	o, err := NewOIDC(context.Background(), OIDCConfig{Issuer: ti.srv.URL, Audience: "lakehold-catalog", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOIDCVerify(t *testing.T) {
	ti := newTestIssuer(t)
	clock := &fakeClock{t: time.Now()}
	o := newOIDC(t, ti, clock)
	now := clock.Now().Unix()
	k1 := ti.keys["k1"]
	base := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"iss": ti.srv.URL, "sub": "alice", "aud": "lakehold-catalog", "exp": now + 300, "iat": now, "groups": []string{"/eng/data", "ops"}}
		if mod != nil {
			mod(c)
		}
		return c
	}
	hsKey := []byte("0123456789abcdef0123456789abcdef")
	tests := []struct {
		name   string
		tok    string
		want   error
		groups []string
	}{
		{"valid", sign(t, jose.RS256, k1, "k1", base(nil)), nil, []string{"/eng/data", "ops"}},
		{"aud array", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["aud"] = []string{"x", "lakehold-catalog"} })), nil, []string{"/eng/data", "ops"}},
		{"groups string", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["groups"] = "admins" })), nil, []string{"admins"}},
		{"no groups", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { delete(c, "groups") })), nil, nil},
		{"groups number", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["groups"] = 7 })), ErrMalformed, nil},
		{"groups mixed", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["groups"] = []any{"a", 1} })), ErrMalformed, nil},
		{"expired", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["exp"] = now - 120 })), ErrExpired, nil},
		{"expired within leeway", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["exp"] = now - 5 })), nil, []string{"/eng/data", "ops"}},
		{"no exp", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { delete(c, "exp") })), ErrMalformed, nil},
		{"nbf future", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["nbf"] = now + 600 })), ErrNotYetValid, nil},
		{"nbf within leeway", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["nbf"] = now + 10 })), nil, []string{"/eng/data", "ops"}},
		{"wrong audience", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["aud"] = "account" })), ErrWrongAudience, nil},
		{"no sub", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { delete(c, "sub") })), ErrMalformed, nil},
		{"wrong issuer", sign(t, jose.RS256, k1, "k1", base(func(c map[string]any) { c["iss"] = ti.srv.URL + "/other" })), ErrBadSignature, nil},
		{"foreign key", sign(t, jose.RS256, mustRSA(t), "k1", base(nil)), ErrBadSignature, nil},
		{"hs256 confusion", sign(t, jose.HS256, hsKey, "k1", base(nil)), ErrMalformed, nil},
		{"alg none", noneToken(t, base(nil)), ErrMalformed, nil},
		{"garbage", "a.b.c", ErrMalformed, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := o.Verify(context.Background(), tc.tok)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			if p.Source != identity.SourceOIDC || p.Subject != "alice" || !equalStrings(p.Groups, tc.groups) {
				t.Fatalf("principal %+v", p)
			}
		})
	}
}

func TestOIDCSubjectAndGroupsClaims(t *testing.T) {
	ti := newTestIssuer(t)
	clock := &fakeClock{t: time.Now()}
	o, err := NewOIDC(context.Background(), OIDCConfig{Issuer: ti.srv.URL, Audience: "c", SubjectClaim: "preferred_username", GroupsClaim: "roles", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	tok := sign(t, jose.RS256, ti.keys["k1"], "k1", map[string]any{"iss": ti.srv.URL, "sub": "uuid-1", "preferred_username": "bob", "aud": "c", "exp": clock.Now().Unix() + 60, "roles": []string{"r"}})
	p, err := o.Verify(context.Background(), tok)
	if err != nil || p.Subject != "bob" || !equalStrings(p.Groups, []string{"r"}) {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestOIDCKeyRotationRateLimited(t *testing.T) {
	ti := newTestIssuer(t)
	clock := &fakeClock{t: time.Now()}
	o := newOIDC(t, ti, clock)
	claims := func() map[string]any {
		return map[string]any{"iss": ti.srv.URL, "sub": "alice", "aud": "lakehold-catalog", "exp": clock.Now().Unix() + 3600}
	}
	ctx := context.Background()
	if _, err := o.Verify(ctx, sign(t, jose.RS256, ti.keys["k1"], "k1", claims())); err != nil {
		t.Fatal(err)
	}
	if n := ti.jwksCount(); n != 1 {
		t.Fatalf("JWKS fetched %d times after first token, want 1", n)
	}
	// A forged kid right after the first fetch: refused without a fetch.
	if _, err := o.Verify(ctx, sign(t, jose.RS256, mustRSA(t), "forged", claims())); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("forged kid: %v", err)
	}
	// The provider rotates: k2 appears. Within the interval it is not
	// fetched yet; many unknown-kid tokens cause no fetch at all.
	k2 := ti.addKey(t, "k2")
	tok2 := sign(t, jose.RS256, k2, "k2", claims())
	for i := 0; i < 20; i++ {
		if _, err := o.Verify(ctx, tok2); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("k2 before interval: %v", err)
		}
	}
	if n := ti.jwksCount(); n != 1 {
		t.Fatalf("JWKS fetched %d times within the interval, want 1", n)
	}
	clock.Add(DefaultRefetchInterval + time.Second)
	tok2 = sign(t, jose.RS256, k2, "k2", claims())
	if _, err := o.Verify(ctx, tok2); err != nil {
		t.Fatalf("k2 after interval: %v", err)
	}
	if n := ti.jwksCount(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
	// Known keys need no fetch.
	for i := 0; i < 5; i++ {
		if _, err := o.Verify(ctx, sign(t, jose.RS256, ti.keys["k1"], "k1", claims())); err != nil {
			t.Fatal(err)
		}
	}
	if n := ti.jwksCount(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
}

func TestOIDCUnavailable(t *testing.T) {
	ti := newTestIssuer(t)
	clock := &fakeClock{t: time.Now()}
	o := newOIDC(t, ti, clock)
	tok := sign(t, jose.RS256, ti.keys["k1"], "k1", map[string]any{"iss": ti.srv.URL, "sub": "a", "aud": "lakehold-catalog", "exp": clock.Now().Unix() + 60})
	ti.srv.Close() // keys never fetched
	if _, err := o.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestNewOIDCConfig(t *testing.T) {
	if _, err := NewOIDC(context.Background(), OIDCConfig{Issuer: "https://x"}); err == nil {
		t.Fatal("no audience accepted")
	}
	ti := newTestIssuer(t)
	// The discovery document names another issuer.
	if _, err := NewOIDC(context.Background(), OIDCConfig{Issuer: ti.srv.URL + "/", Audience: "a"}); err == nil {
		t.Fatal("issuer mismatch accepted")
	}
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// noneToken builds an unsigned token with alg "none".
func noneToken(t *testing.T, claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": "k1"})
	c, _ := json.Marshal(claims)
	return b64(h) + "." + b64(c) + "."
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
