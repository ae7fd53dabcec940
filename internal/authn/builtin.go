package authn

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
)

// DefaultTokenLifetime is how long a built-in token is valid; it also
// bounds how long a deleted principal's last token could be used if the
// generation check were bypassed.
const DefaultTokenLifetime = time.Hour

// DefaultLeeway absorbs clock differences between replicas and providers.
const DefaultLeeway = 30 * time.Second

// DefaultGenerationTTL is how long a principal's secret generation is
// cached per replica: a rotation or deletion on another replica takes
// effect within it.
const DefaultGenerationTTL = 5 * time.Second

// hkdfInfo separates this use of the catalog secret key from the sealing
// of storage secrets, which uses the key directly.
const hkdfInfo = "lakehold builtin-token hs256 v1"

// DeriveKey derives the HS256 token key from the catalog's secret key with
// HKDF-SHA256. It fails when the secret key is shorter than 32 bytes.
func DeriveKey(secretKey []byte) ([]byte, error) {
	if len(secretKey) < 32 {
		return nil, fmt.Errorf("authn: the secret key must be at least 32 bytes, got %d", len(secretKey))
	}
	return hkdf.Key(sha256.New, secretKey, nil, hkdfInfo, 32)
}

// Generations looks up a built-in principal's current state. It returns a
// *fault.Error of fault.NotFound when the principal does not exist; any
// other error means the state is unknown right now.
type Generations interface {
	PrincipalGeneration(ctx context.Context, name string) (id string, generation int64, err error)
}

// builtinClaims are the claims of a built-in token: the registered ones,
// the principal's id (a principal deleted and created again under the same
// name does not inherit old tokens), its secret generation (a rotated
// secret invalidates the tokens issued under the old one) and auth_time
// (OpenID Connect Core §2): when the session began with a client-credentials
// sign-in, carried unchanged through token exchanges so that a chain of
// exchanges cannot outlive the maximum session age. Tokens issued before
// the claim existed lack it; their session counts from their iat.
type builtinClaims struct {
	jwt.Claims
	PrincipalID string           `json:"pid"`
	Generation  int64            `json:"gen"`
	AuthTime    *jwt.NumericDate `json:"auth_time,omitempty"`
}

// Builtin signs and verifies the catalog's own tokens.
type Builtin struct {
	key      []byte
	signer   jose.Signer
	lifetime time.Duration
	leeway   time.Duration
	gens     Generations
	cache    *genCache
	now      func() time.Time
}

// BuiltinConfig configures NewBuiltin. Zero durations take the defaults.
type BuiltinConfig struct {
	SecretKey     []byte // the catalog's --secret-key
	Lifetime      time.Duration
	Leeway        time.Duration
	GenerationTTL time.Duration // negative disables the cache (tests)
	Generations   Generations
	Now           func() time.Time
}

// NewBuiltin returns the built-in token signer and verifier. It fails when
// the secret key is missing or short, or Generations is nil.
func NewBuiltin(c BuiltinConfig) (*Builtin, error) {
	key, err := DeriveKey(c.SecretKey)
	if err != nil {
		return nil, err
	}
	if c.Generations == nil {
		return nil, errors.New("authn: built-in tokens need a principal store")
	}
	if c.Lifetime <= 0 {
		c.Lifetime = DefaultTokenLifetime
	}
	if c.Leeway <= 0 {
		c.Leeway = DefaultLeeway
	}
	if c.GenerationTTL == 0 {
		c.GenerationTTL = DefaultGenerationTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &Builtin{key: key, signer: signer, lifetime: c.Lifetime, leeway: c.Leeway, gens: c.Generations,
		cache: newGenCache(c.GenerationTTL, c.Now), now: c.Now}, nil
}

// Lifetime is how long the tokens Sign issues are valid.
func (b *Builtin) Lifetime() time.Duration { return b.lifetime }

// Sign issues a token for the principal name with id and secret generation,
// for a session that begins now. It fails only if the system random source
// does.
func (b *Builtin) Sign(name, id string, generation int64) (string, error) {
	tok, _, err := b.SignSession(name, id, generation, time.Time{}, time.Time{})
	return tok, err
}

// SignSession issues a token for the principal name with id and secret
// generation, for a session that began at authTime (zero: now), written
// to the auth_time claim. The token expires after Lifetime, or at
// notAfter when that is earlier (zero: no bound); expiresIn is how long
// it is valid, to the second. It fails only if the system random source
// does.
func (b *Builtin) SignSession(name, id string, generation int64, authTime, notAfter time.Time) (tok string, expiresIn time.Duration, err error) {
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", 0, err
	}
	now := b.now().Truncate(time.Second)
	if authTime.IsZero() {
		authTime = now
	}
	exp := now.Add(b.lifetime)
	if !notAfter.IsZero() && notAfter.Before(exp) {
		exp = notAfter.Truncate(time.Second)
	}
	c := builtinClaims{
		Claims: jwt.Claims{
			Issuer: BuiltinIssuer, Subject: name, Audience: jwt.Audience{BuiltinIssuer},
			Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(now),
			ID: hex.EncodeToString(jti[:]),
		},
		PrincipalID: id, Generation: generation, AuthTime: jwt.NewNumericDate(authTime),
	}
	tok, err = jwt.Signed(b.signer).Claims(c).Serialize()
	return tok, exp.Sub(now), err
}

// verify checks signature and claims of a built-in token, not whether the
// principal still exists.
func (b *Builtin) verify(tok string) (builtinClaims, error) {
	var c builtinClaims
	t, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return c, ErrMalformed
	}
	if err := t.Claims(b.key, &c); err != nil {
		return c, ErrBadSignature
	}
	if c.Expiry == nil || c.Subject == "" || c.PrincipalID == "" || c.Generation < 1 {
		return c, ErrMalformed
	}
	err = c.Claims.ValidateWithLeeway(jwt.Expected{Issuer: BuiltinIssuer, AnyAudience: jwt.Audience{BuiltinIssuer}, Time: b.now()}, b.leeway)
	return c, mapJWTError(err)
}

// mapJWTError turns go-jose claim validation errors into ours.
func mapJWTError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrExpired):
		return ErrExpired
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return ErrNotYetValid
	case errors.Is(err, jwt.ErrInvalidAudience):
		return ErrWrongAudience
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return ErrUnknownIssuer
	}
	return ErrMalformed
}

// Authenticate verifies a built-in token and that its principal still
// exists with the same id and secret generation (cached briefly). It
// returns ErrRevoked for a deleted principal or rotated secret and
// ErrUnavailable when the store cannot be asked.
func (b *Builtin) Authenticate(ctx context.Context, tok string) (identity.Principal, error) {
	c, err := b.verify(tok)
	if err != nil {
		return identity.Principal{}, err
	}
	return b.admit(ctx, c)
}

// admit checks that the principal of verified claims c still exists with
// the same id and secret generation (cached briefly).
func (b *Builtin) admit(ctx context.Context, c builtinClaims) (identity.Principal, error) {
	st, err := b.cache.get(c.Subject, func() (genState, error) {
		id, gen, err := b.gens.PrincipalGeneration(ctx, c.Subject)
		if fault.KindOf(err) == fault.NotFound {
			return genState{missing: true}, nil
		}
		return genState{id: id, gen: gen}, err
	})
	if err != nil {
		return identity.Principal{}, fmt.Errorf("%w: principal lookup failed", ErrUnavailable)
	}
	if st.missing || st.id != c.PrincipalID || st.gen != c.Generation {
		return identity.Principal{}, ErrRevoked
	}
	p := identity.Principal{Source: identity.SourceBuiltin, Subject: c.Subject}
	switch {
	case c.AuthTime != nil:
		p.AuthTime = c.AuthTime.Time()
	case c.IssuedAt != nil: // issued before auth_time existed
		p.AuthTime = c.IssuedAt.Time()
	}
	return p, nil
}

// genState is a cached principal lookup.
type genState struct {
	id      string
	gen     int64
	missing bool
	expires time.Time
}

// genCache keeps principal lookups for a short TTL so that the hot path
// costs one database read per principal per TTL and replica.
type genCache struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[string]genState
}

// maxCached bounds the cache; when full it starts over, which only costs
// lookups.
const maxCached = 10000

func newGenCache(ttl time.Duration, now func() time.Time) *genCache {
	return &genCache{ttl: ttl, now: now, m: map[string]genState{}}
}

// get returns the cached state of name or loads it; errors are not cached.
func (c *genCache) get(name string, load func() (genState, error)) (genState, error) {
	if c.ttl > 0 {
		c.mu.Lock()
		st, ok := c.m[name]
		c.mu.Unlock()
		if ok && c.now().Before(st.expires) {
			return st, nil
		}
	}
	st, err := load()
	if err != nil || c.ttl <= 0 {
		return st, err
	}
	st.expires = c.now().Add(c.ttl)
	c.mu.Lock()
	if len(c.m) >= maxCached {
		c.m = map[string]genState{}
	}
	c.m[name] = st
	c.mu.Unlock()
	return st, nil
}

// Forget drops name from this replica's cache, so that a rotation or
// deletion made here takes effect at once.
func (b *Builtin) Forget(name string) {
	b.cache.mu.Lock()
	delete(b.cache.m, name)
	b.cache.mu.Unlock()
}

// GenerationsFunc adapts a function to Generations (the service is built
// after the token signer it is given, so callers close over it).
type GenerationsFunc func(ctx context.Context, name string) (string, int64, error)

// PrincipalGeneration implements Generations.
func (f GenerationsFunc) PrincipalGeneration(ctx context.Context, name string) (string, int64, error) {
	return f(ctx, name)
}
