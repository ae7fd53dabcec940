package access

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakehold/catalog/internal/authn/secret"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/store/sqlstore"
)

// recordingIssuer is a TokenIssuer that notes the session of each token.
type recordingIssuer struct {
	mu       sync.Mutex
	authTime []time.Time
	notAfter []time.Time
	now      func() time.Time
}

func (r *recordingIssuer) SignSession(name, id string, gen int64, authTime, notAfter time.Time) (string, time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.authTime = append(r.authTime, authTime)
	r.notAfter = append(r.notAfter, notAfter)
	return "tok-" + name, min(time.Hour, notAfter.Sub(r.now())), nil
}
func (r *recordingIssuer) Lifetime() time.Duration { return time.Hour }
func (r *recordingIssuer) Forget(string)           {}

// countingVerifier wraps secret.Verify and notes the hashes it was given.
type countingVerifier struct {
	mu     sync.Mutex
	hashes []string
}

func (c *countingVerifier) verify(plain, encoded string) (bool, error) {
	c.mu.Lock()
	c.hashes = append(c.hashes, encoded)
	c.mu.Unlock()
	return secret.Verify(plain, encoded)
}

type sessionClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *sessionClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *sessionClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func newSignInService(t *testing.T, opts AdminOptions) *Admin {
	t.Helper()
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return NewAdmin(st, AllowAll{}, opts)
}

var operator = identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})

// argonParams is the parameter part of an encoded hash ("m=...,t=...,p=...")
// with the lengths of its salt and key.
func argonParams(t *testing.T, encoded string) string {
	t.Helper()
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 {
		t.Fatalf("not an argon2id hash: %q", encoded)
	}
	return fmt.Sprintf("%s$%s$%s salt=%d key=%d", parts[1], parts[2], parts[3], len(parts[4]), len(parts[5]))
}

// TestUnknownClientCostsOneVerification: an unknown client id costs
// exactly one verification, against a hash with the very parameters (and
// so the time and memory) of the stored ones, as a wrong secret does.
func TestUnknownClientCostsOneVerification(t *testing.T) {
	cv := &countingVerifier{}
	clk := &sessionClock{t: time.Now()}
	svc := newSignInService(t, AdminOptions{Tokens: &recordingIssuer{now: clk.Now}, VerifySecret: cv.verify, Now: clk.Now})
	c, err := svc.CreatePrincipal(operator, "etl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IssueToken(context.Background(), c.ClientID, c.ClientSecret+"x"); fault.KindOf(err) != fault.Unauthorized {
		t.Fatalf("wrong secret: %v", err)
	}
	if _, err := svc.IssueToken(context.Background(), "lh-nosuchclient0000", c.ClientSecret); fault.KindOf(err) != fault.Unauthorized {
		t.Fatalf("unknown id: %v", err)
	}
	if len(cv.hashes) != 2 {
		t.Fatalf("%d verifications, want one per attempt", len(cv.hashes))
	}
	if cv.hashes[1] != dummyHash() {
		t.Fatal("the unknown id was not checked against the dummy hash")
	}
	stored, dummy := argonParams(t, cv.hashes[0]), argonParams(t, cv.hashes[1])
	if stored != dummy {
		t.Fatalf("stored hash %s, dummy %s: the two paths cost differently", stored, dummy)
	}
	if !strings.HasPrefix(stored, "argon2id$v=19$m=19456,t=2,p=1 ") {
		t.Fatalf("parameters %s, want the defaults", stored)
	}
}

// TestSessionCap: a session begun by IssueToken may be renewed until
// MaxSessionAge has passed, never beyond; the renewed tokens keep its
// start and expire no later than its end.
func TestSessionCap(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	clk := &sessionClock{t: t0}
	iss := &recordingIssuer{now: clk.Now}
	svc := newSignInService(t, AdminOptions{Tokens: iss, MaxSessionAge: 12 * time.Hour, Now: clk.Now})
	c, err := svc.CreatePrincipal(operator, "etl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IssueToken(context.Background(), c.ClientID, c.ClientSecret); err != nil {
		t.Fatal(err)
	}
	end := t0.Add(12 * time.Hour)
	if !iss.authTime[0].Equal(t0) || !iss.notAfter[0].Equal(end) {
		t.Fatalf("sign-in session %s..%s, want %s..%s", iss.authTime[0], iss.notAfter[0], t0, end)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		at      time.Duration // after t0
		session time.Time     // the session start the caller presents
		ok      bool
		life    time.Duration
	}{
		{50 * time.Minute, t0, true, time.Hour},
		{11*time.Hour + 40*time.Minute, t0, true, 20 * time.Minute},
		{12*time.Hour - time.Second, t0, true, time.Second},
		{12 * time.Hour, t0, false, 0},
		{30 * time.Hour, t0, false, 0},
		{30 * time.Hour, time.Time{}, false, 0},                   // no session start: refused
		{30 * time.Hour, t0.Add(29 * time.Hour), true, time.Hour}, // a later sign-in's session
	} {
		clk.Set(t0.Add(tc.at))
		n := len(iss.authTime)
		tok, err := svc.RefreshToken(ctx, "etl", tc.session)
		if !tc.ok {
			if !errors.Is(err, ErrSessionExpired) || fault.KindOf(err) != fault.Unauthorized {
				t.Fatalf("at +%s: %v, want ErrSessionExpired", tc.at, err)
			}
			if len(iss.authTime) != n {
				t.Fatalf("at +%s: a token was signed for an expired session", tc.at)
			}
			continue
		}
		if err != nil {
			t.Fatalf("at +%s: %v", tc.at, err)
		}
		if !iss.authTime[n].Equal(tc.session) || !iss.notAfter[n].Equal(tc.session.Add(12*time.Hour)) || tok.ExpiresIn != tc.life {
			t.Fatalf("at +%s: session %s..%s, expires in %s", tc.at, iss.authTime[n], iss.notAfter[n], tok.ExpiresIn)
		}
	}
}
