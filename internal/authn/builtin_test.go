package authn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// fakeGens is an in-memory principal store.
type fakeGens struct {
	mu sync.Mutex
	m  map[string]struct {
		id  string
		gen int64
	}
	calls int
	fail  bool
}

func (f *fakeGens) PrincipalGeneration(_ context.Context, name string) (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail {
		return "", 0, errors.New("db down")
	}
	p, ok := f.m[name]
	if !ok {
		return "", 0, &fault.Error{Kind: fault.NotFound, Message: "no"}
	}
	return p.id, p.gen, nil
}

func (f *fakeGens) set(name, id string, gen int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen == 0 {
		delete(f.m, name)
		return
	}
	f.m[name] = struct {
		id  string
		gen int64
	}{id, gen}
}

var testKey = []byte("k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-")

func newBuiltin(t *testing.T, clock *fakeClock, gens *fakeGens, ttl time.Duration) *Builtin {
	b, err := NewBuiltin(BuiltinConfig{SecretKey: testKey, Generations: gens, Now: clock.Now, GenerationTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuiltinTokens(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	gens := &fakeGens{m: map[string]struct {
		id  string
		gen int64
	}{}}
	gens.set("etl", "id-1", 1)
	b := newBuiltin(t, clock, gens, -1)
	ctx := context.Background()
	tok, err := b.Sign("etl", "id-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Authenticate(ctx, tok)
	if err != nil || p.Source != identity.SourceBuiltin || p.Subject != "etl" || p.Groups != nil {
		t.Fatalf("%+v %v", p, err)
	}
	// A replica with the same secret key verifies it; another key does not.
	other := newBuiltin(t, clock, gens, -1)
	if _, err := other.Authenticate(ctx, tok); err != nil {
		t.Fatalf("same key, other replica: %v", err)
	}
	wrong, _ := NewBuiltin(BuiltinConfig{SecretKey: []byte(strings.Repeat("z", 32)), Generations: gens, Now: clock.Now})
	if _, err := wrong.Authenticate(ctx, tok); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("other key: %v", err)
	}
	// Rotation: generation 2 revokes tokens of generation 1.
	gens.set("etl", "id-1", 2)
	if _, err := b.Authenticate(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("after rotation: %v", err)
	}
	// Deleted and created again under the same name: a new id.
	gens.set("etl", "id-2", 1)
	if _, err := b.Authenticate(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("recreated principal: %v", err)
	}
	gens.set("etl", "", 0)
	if _, err := b.Authenticate(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("deleted principal: %v", err)
	}
	gens.set("etl", "id-1", 1)
	clock.Add(DefaultTokenLifetime + DefaultLeeway + time.Second)
	if _, err := b.Authenticate(ctx, tok); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired: %v", err)
	}
	gens.fail = true
	tok, _ = b.Sign("etl", "id-1", 1)
	if _, err := b.Authenticate(ctx, tok); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("store down: %v", err)
	}
}

func TestBuiltinRefusesForgeries(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	gens := &fakeGens{m: map[string]struct {
		id  string
		gen int64
	}{}}
	gens.set("etl", "id-1", 1)
	b := newBuiltin(t, clock, gens, -1)
	now := clock.Now().Unix()
	claims := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"iss": "lakehold", "sub": "etl", "aud": "lakehold", "exp": now + 60, "iat": now, "pid": "id-1", "gen": 1}
		mod(c)
		return c
	}
	key := b.key
	tests := []struct {
		name string
		tok  string
		want error
	}{
		{"wrong aud", sign(t, jose.HS256, key, "", claims(func(c map[string]any) { c["aud"] = "other" })), ErrWrongAudience},
		{"no exp", sign(t, jose.HS256, key, "", claims(func(c map[string]any) { delete(c, "exp") })), ErrMalformed},
		{"no gen", sign(t, jose.HS256, key, "", claims(func(c map[string]any) { delete(c, "gen") })), ErrMalformed},
		{"future iat", sign(t, jose.HS256, key, "", claims(func(c map[string]any) { c["iat"] = now + 3600 })), ErrNotYetValid},
		{"rs256", sign(t, jose.RS256, mustRSA(t), "", claims(func(map[string]any) {})), ErrMalformed},
		{"none", noneToken(t, claims(func(map[string]any) {})), ErrMalformed},
		{"raw secret key", sign(t, jose.HS256, testKey, "", claims(func(map[string]any) {})), ErrBadSignature},
	}
	for _, tc := range tests {
		if _, err := b.Authenticate(context.Background(), tc.tok); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestGenerationCache(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	gens := &fakeGens{m: map[string]struct {
		id  string
		gen int64
	}{}}
	gens.set("etl", "id-1", 1)
	b := newBuiltin(t, clock, gens, 5*time.Second)
	tok, _ := b.Sign("etl", "id-1", 1)
	for i := 0; i < 10; i++ {
		if _, err := b.Authenticate(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if gens.calls != 1 {
		t.Fatalf("%d lookups within the TTL, want 1", gens.calls)
	}
	gens.set("etl", "id-1", 2) // rotated on another replica
	if _, err := b.Authenticate(context.Background(), tok); err != nil {
		t.Fatalf("within the TTL the cached generation still holds: %v", err)
	}
	clock.Add(5 * time.Second)
	if _, err := b.Authenticate(context.Background(), tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("after the TTL: %v", err)
	}
	gens.set("etl", "id-1", 1)
	b.Forget("etl")
	if _, err := b.Authenticate(context.Background(), tok); err != nil {
		t.Fatalf("after Forget: %v", err)
	}
}

func TestAuthenticatorDispatch(t *testing.T) {
	ti := newTestIssuer(t)
	clock := &fakeClock{t: time.Now()}
	gens := &fakeGens{m: map[string]struct {
		id  string
		gen int64
	}{}}
	gens.set("etl", "id-1", 1)
	a := New(newBuiltin(t, clock, gens, -1), newOIDC(t, ti, clock))
	ctx := context.Background()
	bt, _ := a.Builtin().Sign("etl", "id-1", 1)
	ot := sign(t, jose.RS256, ti.keys["k1"], "k1", map[string]any{"iss": ti.srv.URL, "sub": "alice", "aud": "lakehold-catalog", "exp": clock.Now().Unix() + 60})
	for _, tc := range []struct {
		header string
		want   error
		sub    string
	}{
		{"Bearer " + bt, nil, "etl"},
		{"bearer  " + ot, nil, "alice"},
		{"", ErrMissing, ""},
		{"Basic " + bt, ErrMalformed, ""},
		{"Bearer", ErrMalformed, ""},
		{"Bearer x.y", ErrMalformed, ""},
		{"Bearer " + b64([]byte(`{}`)) + "." + b64([]byte(`{"iss":"https://evil"}`)) + ".c2ln", ErrUnknownIssuer, ""},
	} {
		p, err := a.Authenticate(ctx, tc.header)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) || p.Subject != tc.sub {
			t.Errorf("%.30q: %+v %v, want %v", tc.header, p, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), bt) || strings.Contains(err.Error(), ot)) {
			t.Errorf("error text contains the token")
		}
	}
}

func TestParseBearer(t *testing.T) {
	for _, tc := range []struct {
		in, tok string
		err     error
	}{
		{"Bearer abc", "abc", nil},
		{"BEARER abc==", "abc==", nil},
		{"  Bearer   a.b-c_d~e+f/g  ", "a.b-c_d~e+f/g", nil},
		{"", "", ErrMissing},
		{"   ", "", ErrMissing},
		{"Bearer ", "", ErrMalformed},
		{"Bearerabc", "", ErrMalformed},
		{"Token abc", "", ErrMalformed},
		{"Bearer a b", "", ErrMalformed},
		{"Bearer ===", "", ErrMalformed},
		{"Bearer ab\x00", "", ErrMalformed},
		{"Bearer " + strings.Repeat("a", maxTokenBytes+1), "", ErrMalformed},
	} {
		tok, err := ParseBearer(tc.in)
		if tok != tc.tok || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("ParseBearer(%.20q) = %q, %v; want %q, %v", tc.in, tok, err, tc.tok, tc.err)
		}
	}
}

func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "", "Basic x", "Bearer ==", "Bearer a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, err := ParseBearer(h)
		if err != nil {
			if tok != "" {
				t.Fatal("token with error")
			}
			return
		}
		if tok == "" || strings.ContainsAny(tok, " \t\r\n") || !strings.Contains(h, tok) {
			t.Fatalf("ParseBearer(%q) = %q", h, tok)
		}
	})
}

// FuzzVerifyToken feeds arbitrary tokens through both verifiers (built-in
// and an httptest OIDC issuer): nothing may panic, every failure is one of
// the typed errors, and no error text repeats the token.
func FuzzVerifyToken(f *testing.F) {
	clock := &fakeClock{t: time.Now()}
	ti := newTestIssuer(f)
	gens := &fakeGens{m: map[string]struct {
		id  string
		gen int64
	}{}}
	gens.set("etl", "id-1", 1)
	b, err := NewBuiltin(BuiltinConfig{SecretKey: testKey, Generations: gens, Now: clock.Now, GenerationTTL: -1})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := b.Sign("etl", "id-1", 1)
	f.Add(good)
	f.Add(good[:len(good)-3])
	h, _ := json.Marshal(map[string]string{"alg": "none"})
	f.Add(b64(h) + "." + b64([]byte(`{"iss":"lakehold"}`)) + ".")
	f.Add("a.b.c")
	o := newOIDC(f, ti, clock)
	ot := sign(f, jose.RS256, ti.keys["k1"], "k1", map[string]any{"iss": ti.srv.URL, "sub": "alice", "aud": "lakehold-catalog", "exp": clock.Now().Unix() + 3600})
	f.Add(ot)
	f.Add(ot[:len(ot)-2])
	a := New(b, o)
	typed := []error{ErrMissing, ErrMalformed, ErrExpired, ErrNotYetValid, ErrBadSignature, ErrWrongAudience, ErrUnknownIssuer, ErrRevoked, ErrUnavailable}
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := a.Authenticate(context.Background(), "Bearer "+tok)
		if err == nil {
			if p.Subject != "etl" && p.Subject != "alice" {
				t.Fatalf("accepted %q as %+v", tok, p)
			}
			return
		}
		ok := false
		for _, e := range typed {
			ok = ok || errors.Is(err, e)
		}
		if !ok {
			t.Fatalf("untyped error %v", err)
		}
		if len(tok) > 8 && strings.Contains(err.Error(), tok) {
			t.Fatal("error repeats the token")
		}
	})
}

// The verified-token cache saves the signature check on repeated requests
// but never outlives the token, and never skips the principal lookup.
func TestAuthenticatorCacheHonoursExpiryAndRevocation(t *testing.T) {
	ti := newTestIssuer(t)
	clock := &fakeClock{t: time.Now()}
	gens := &fakeGens{m: map[string]struct {
		id  string
		gen int64
	}{}}
	gens.set("etl", "id-1", 1)
	a := New(newBuiltin(t, clock, gens, -1), newOIDC(t, ti, clock))
	ctx := context.Background()
	bt, _ := a.Builtin().Sign("etl", "id-1", 1)
	ot := sign(t, jose.RS256, ti.keys["k1"], "k1", map[string]any{"iss": ti.srv.URL, "sub": "alice", "aud": "lakehold-catalog", "exp": clock.Now().Unix() + 60})
	for _, h := range []string{"Bearer " + bt, "Bearer " + ot} {
		for i := 0; i < 2; i++ { // the second call is served from the cache
			if _, err := a.Authenticate(ctx, h); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	}
	gens.set("etl", "id-1", 2) // rotated: the cached token is revoked at once
	if _, err := a.Authenticate(ctx, "Bearer "+bt); !errors.Is(err, ErrRevoked) {
		t.Fatalf("rotated principal: %v, want ErrRevoked", err)
	}
	clock.Add(2 * time.Hour) // past both tokens' exp and any leeway
	for _, h := range []string{"Bearer " + bt, "Bearer " + ot} {
		if _, err := a.Authenticate(ctx, h); !errors.Is(err, ErrExpired) {
			t.Fatalf("expired token: %v, want ErrExpired", err)
		}
	}
}
