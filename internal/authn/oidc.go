package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/tracing"
)

// DefaultRefetchInterval is the least time between two JWKS fetches caused
// by tokens with unknown key ids: a flood of forged kids cannot turn the
// catalog into a load generator against the provider.
const DefaultRefetchInterval = 10 * time.Second

// asymmetricAlgs are the only algorithms accepted from an OIDC provider.
// HMAC algorithms are refused so that a provider's public key can never be
// used as an HMAC secret (algorithm confusion), and "none" is never valid.
var asymmetricAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// OIDCConfig configures NewOIDC.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL, exactly as in its tokens' iss.
	Issuer string
	// Audience must be among the token's aud values (required: without it
	// a token the provider issued to any other client would be accepted).
	Audience string
	// SubjectClaim names the claim holding the principal (default "sub").
	SubjectClaim string
	// GroupsClaim names the claim holding the groups (default "groups"): a
	// JSON array of strings or a single string. Values are kept verbatim;
	// Keycloak with "full group path" on sends "/parent/child" and that is
	// the name grants must use.
	GroupsClaim     string
	Leeway          time.Duration
	RefetchInterval time.Duration
	HTTPClient      *http.Client
	Now             func() time.Time
	// TracerProvider receives a span per discovery and JWKS fetch
	// (tracing.go); nil: none.
	TracerProvider trace.TracerProvider
}

// OIDC verifies JWTs of one OpenID Connect provider.
type OIDC struct {
	cfg      OIDCConfig
	keys     *keySet
	verifier *oidc.IDTokenVerifier
	algs     []jose.SignatureAlgorithm
}

// NewOIDC discovers the provider (/.well-known/openid-configuration) and
// returns its verifier. It fails when the issuer or audience is empty, the
// discovery document cannot be fetched or names another issuer, or it has
// no jwks_uri.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("authn: OIDC needs an issuer and an audience (--oidc-issuer, --oidc-audience)")
	}
	if cfg.SubjectClaim == "" {
		cfg.SubjectClaim = "sub"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.RefetchInterval <= 0 {
		cfg.RefetchInterval = DefaultRefetchInterval
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tracer := tracing.Tracer(cfg.TracerProvider)
	dctx, span := startFetch(ctx, tracer, "oidc.discovery", cfg.Issuer, true)
	p, err := oidc.NewProvider(oidc.ClientContext(dctx, cfg.HTTPClient), cfg.Issuer)
	endFetch(span, err)
	if err != nil {
		return nil, fmt.Errorf("authn: OIDC discovery for %s: %w", cfg.Issuer, err)
	}
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKSURI == "" {
		return nil, fmt.Errorf("authn: OIDC discovery for %s: no jwks_uri", cfg.Issuer)
	}
	o := &OIDC{cfg: cfg, algs: asymmetricAlgs}
	o.keys = &keySet{url: meta.JWKSURI, client: cfg.HTTPClient, minInterval: cfg.RefetchInterval, now: cfg.Now, algs: o.algs, tracer: tracer}
	names := make([]string, len(o.algs))
	for i, a := range o.algs {
		names[i] = string(a)
	}
	// go-oidc checks signature and issuer; audience, exp and nbf are checked
	// below with our leeway and typed errors.
	o.verifier = oidc.NewVerifier(cfg.Issuer, o.keys, &oidc.Config{
		SkipClientIDCheck: true, SkipExpiryCheck: true, SupportedSigningAlgs: names,
	})
	return o, nil
}

// Issuer is the configured issuer URL.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// Verify checks tok and returns its principal. Errors wrap ErrMalformed
// (not a JWS, refused algorithm, missing exp or subject, groups of the wrong
// type), ErrBadSignature, ErrExpired, ErrNotYetValid, ErrWrongAudience or
// ErrUnavailable (the provider's keys could not be fetched).
func (o *OIDC) Verify(ctx context.Context, tok string) (identity.Principal, error) {
	if _, err := jose.ParseSigned(tok, o.algs); err != nil {
		return identity.Principal{}, ErrMalformed
	}
	// go-oidc flattens key set errors into text; the flag carries "the
	// keys could not be fetched" through it.
	unavailable := new(bool)
	idt, err := o.verifier.Verify(context.WithValue(ctx, unavailableKey{}, unavailable), tok)
	if err != nil {
		if *unavailable {
			return identity.Principal{}, fmt.Errorf("%w: OIDC keys could not be fetched", ErrUnavailable)
		}
		return identity.Principal{}, ErrBadSignature
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return identity.Principal{}, ErrMalformed
	}
	if err := o.checkTimes(claims); err != nil {
		return identity.Principal{}, err
	}
	if !audienceContains(claims["aud"], o.cfg.Audience) {
		return identity.Principal{}, ErrWrongAudience
	}
	return principalFromClaims(claims, o.cfg.SubjectClaim, o.cfg.GroupsClaim)
}

// checkTimes requires exp and honours nbf, both with the leeway.
func (o *OIDC) checkTimes(claims map[string]any) error {
	now := o.cfg.Now()
	exp, ok := numericDate(claims["exp"])
	if !ok {
		return ErrMalformed
	}
	if now.After(exp.Add(o.cfg.Leeway)) {
		return ErrExpired
	}
	if v, present := claims["nbf"]; present {
		nbf, ok := numericDate(v)
		if !ok {
			return ErrMalformed
		}
		if now.Add(o.cfg.Leeway).Before(nbf) {
			return ErrNotYetValid
		}
	}
	return nil
}

func numericDate(v any) (time.Time, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

// audienceContains accepts aud as one string or an array of strings.
func audienceContains(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}

// principalFromClaims reads the subject and groups claims. A missing or
// empty subject, or groups that are neither a string nor an array of
// strings, is ErrMalformed; absent groups are no groups.
func principalFromClaims(claims map[string]any, subjectClaim, groupsClaim string) (identity.Principal, error) {
	sub, _ := claims[subjectClaim].(string)
	if sub == "" {
		return identity.Principal{}, fmt.Errorf("%w: no %q claim", ErrMalformed, subjectClaim)
	}
	p := identity.Principal{Source: identity.SourceOIDC, Subject: sub}
	switch g := claims[groupsClaim].(type) {
	case nil:
	case string:
		p.Groups = []string{g}
	case []any:
		for _, v := range g {
			s, ok := v.(string)
			if !ok {
				return identity.Principal{}, fmt.Errorf("%w: %q claim holds a non-string", ErrMalformed, groupsClaim)
			}
			p.Groups = append(p.Groups, s)
		}
	default:
		return identity.Principal{}, fmt.Errorf("%w: %q claim is not a string or array", ErrMalformed, groupsClaim)
	}
	return p, nil
}

// errKeysUnavailable is returned by keySet when it has no keys and the
// JWKS endpoint did not answer; it also sets the *bool in the context
// under unavailableKey.
var errKeysUnavailable = errors.New("authn: JWKS unavailable")

type unavailableKey struct{}

// keySet is the provider's JWKS, fetched on first use and again when a
// token names a key id it does not know (key rotation), at most once per
// minInterval. go-oidc's own remote key set refetches on every unknown
// kid, which a client could abuse.
type keySet struct {
	url         string
	client      *http.Client
	minInterval time.Duration
	now         func() time.Time
	algs        []jose.SignatureAlgorithm
	tracer      trace.Tracer // nil: no spans

	mu        sync.Mutex // held across a fetch: concurrent misses share it
	keys      []jose.JSONWebKey
	lastFetch time.Time
	fetches   int // for tests
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, tok string) ([]byte, error) {
	jws, err := jose.ParseSigned(tok, k.algs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, ErrMalformed
	}
	kid := jws.Signatures[0].Header.KeyID
	k.mu.Lock()
	defer k.mu.Unlock()
	if payload, ok := verifyWith(jws, k.keys, kid); ok {
		return payload, nil
	}
	if !k.lastFetch.IsZero() && k.now().Sub(k.lastFetch) < k.minInterval {
		return nil, k.failure(ctx)
	}
	k.lastFetch = k.now()
	k.fetches++
	fctx, span := startFetch(ctx, k.tracer, "oidc.jwks", k.url, false)
	keys, err := k.fetch(fctx)
	endFetch(span, err)
	if err != nil {
		return nil, k.failure(ctx)
	}
	k.keys = keys
	if payload, ok := verifyWith(jws, k.keys, kid); ok {
		return payload, nil
	}
	return nil, ErrBadSignature
}

// failure is the error for a token no known key verifies: the keys are
// unavailable when none was ever fetched, else the signature is bad.
func (k *keySet) failure(ctx context.Context) error {
	if len(k.keys) > 0 {
		return ErrBadSignature
	}
	if flag, ok := ctx.Value(unavailableKey{}).(*bool); ok {
		*flag = true
	}
	return errKeysUnavailable
}

// verifyWith tries the public signing keys matching kid (all of them when
// the token names none).
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) ([]byte, bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// fetch downloads the JWKS and keeps only public signature keys.
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS status %d", resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, err
	}
	var out []jose.JSONWebKey
	for _, key := range set.Keys {
		if key.Use == "enc" {
			continue
		}
		switch key.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			out = append(out, key)
		}
	}
	return out, nil
}
