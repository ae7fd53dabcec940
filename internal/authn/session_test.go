package authn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// claimsOf decodes the payload of a signed token without checking it.
func claimsOf(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSessionAuthTime: a token carries the start of its session in
// auth_time; a renewal keeps it; an expiry bound shortens the token; a
// token from before auth_time existed counts from its iat.
func TestSessionAuthTime(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
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
	c := claimsOf(t, tok)
	if c["auth_time"] != float64(t0.Unix()) || c["iat"] != float64(t0.Unix()) {
		t.Fatalf("a new session: auth_time %v, iat %v, want both %d", c["auth_time"], c["iat"], t0.Unix())
	}
	p, err := b.Authenticate(ctx, tok)
	if err != nil || !p.AuthTime.Equal(t0) {
		t.Fatalf("principal %+v, %v: want AuthTime %s", p, err, t0)
	}

	// A renewal 50 minutes on keeps the session start.
	clock.Add(50 * time.Minute)
	renewed, life, err := b.SignSession("etl", "id-1", 1, p.AuthTime, time.Time{})
	if err != nil || life != DefaultTokenLifetime {
		t.Fatalf("SignSession: %v, lifetime %s", err, life)
	}
	c = claimsOf(t, renewed)
	if c["auth_time"] != float64(t0.Unix()) || c["iat"] != float64(t0.Add(50*time.Minute).Unix()) {
		t.Fatalf("renewed: auth_time %v, iat %v", c["auth_time"], c["iat"])
	}
	if p, err := b.Authenticate(ctx, renewed); err != nil || !p.AuthTime.Equal(t0) {
		t.Fatalf("renewed principal %+v, %v", p, err)
	}

	// The end of the session bounds the expiry.
	end := clock.Now().Add(20 * time.Minute)
	short, life, err := b.SignSession("etl", "id-1", 1, t0, end)
	if err != nil || life != 20*time.Minute {
		t.Fatalf("bounded: %v, lifetime %s", err, life)
	}
	if c := claimsOf(t, short); c["exp"] != float64(end.Unix()) {
		t.Fatalf("bounded exp %v, want %d", c["exp"], end.Unix())
	}

	// A token signed before the claim existed: its session began at iat.
	legacy, err := jwt.Signed(b.signer).Claims(builtinClaims{
		Claims: jwt.Claims{Issuer: BuiltinIssuer, Subject: "etl", Audience: jwt.Audience{BuiltinIssuer},
			Expiry: jwt.NewNumericDate(clock.Now().Add(time.Hour)), IssuedAt: jwt.NewNumericDate(clock.Now()), ID: "x"},
		PrincipalID: "id-1", Generation: 1,
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := claimsOf(t, legacy)["auth_time"]; ok {
		t.Fatal("the legacy token has auth_time")
	}
	if p, err := b.Authenticate(ctx, legacy); err != nil || !p.AuthTime.Equal(clock.Now()) {
		t.Fatalf("legacy principal %+v, %v: want AuthTime %s (its iat)", p, err, clock.Now())
	}
}
