// Package authn authenticates catalog callers. A request carries
// "Authorization: Bearer <token>"; the token is either a built-in token the
// catalog signed itself at POST /v1/oauth/tokens (issuer "lakehold", HS256
// with a key derived from the catalog's secret key, so every replica that
// shares the key verifies it) or a JWT from an external OpenID Connect
// provider, verified against the provider's published keys.
//
// Every failure is one of the typed errors below so that logs and tests can
// tell them apart; clients only ever see the generic "invalid token" text
// (ClientMessage), and no error text contains the token.
package authn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/lakehold/catalog/internal/identity"
)

// Authentication failures. Errors returned by this package wrap exactly one
// of them; test with errors.Is.
var (
	// ErrMissing is returned when the request has no Authorization header.
	ErrMissing = errors.New("authn: no bearer token")
	// ErrMalformed is returned when the header is not "Bearer <token>", the
	// token is not a compact JWS, uses a refused algorithm (none, or HMAC
	// for an OIDC issuer), or lacks a required claim.
	ErrMalformed = errors.New("authn: malformed token")
	// ErrExpired is returned when exp is past, beyond the leeway.
	ErrExpired = errors.New("authn: token expired")
	// ErrNotYetValid is returned when nbf (or iat) is in the future, beyond
	// the leeway.
	ErrNotYetValid = errors.New("authn: token not yet valid")
	// ErrBadSignature is returned when no trusted key verifies the token.
	ErrBadSignature = errors.New("authn: bad token signature")
	// ErrWrongAudience is returned when aud does not name this catalog.
	ErrWrongAudience = errors.New("authn: wrong token audience")
	// ErrUnknownIssuer is returned when iss is neither "lakehold" nor the
	// configured OIDC issuer.
	ErrUnknownIssuer = errors.New("authn: unknown token issuer")
	// ErrRevoked is returned when a built-in token names a principal that
	// was deleted, or a secret generation that was rotated away.
	ErrRevoked = errors.New("authn: token revoked")
	// ErrUnavailable is returned when the token could not be checked now
	// (the catalog database or the OIDC provider did not answer); the
	// caller should answer 503, not 401.
	ErrUnavailable = errors.New("authn: cannot check token now")
)

// ClientMessage is the only text a client is told about a refused token.
const ClientMessage = "invalid token"

// BuiltinIssuer is the iss and aud of the tokens the catalog signs.
const BuiltinIssuer = "lakehold"

// maxTokenBytes bounds the tokens we parse; real JWTs are a few KiB.
const maxTokenBytes = 16 << 10

// ParseBearer extracts the token from an Authorization header value. The
// scheme is case-insensitive (RFC 7235); the token must be token68
// characters. It returns ErrMissing for an empty header and ErrMalformed
// for anything else that is not a bearer token.
func ParseBearer(header string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", ErrMissing
	}
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", ErrMalformed
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || len(tok) > maxTokenBytes || !isToken68(tok) {
		return "", ErrMalformed
	}
	return tok, nil
}

// isToken68 reports whether s matches RFC 7235 token68:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// peekIssuer returns the iss claim of a compact JWS without verifying it,
// only to choose the verifier, and its exp claim (zero when absent). It
// returns ErrMalformed when the token is not three base64url parts with a
// JSON object payload.
func peekIssuer(tok string) (string, time.Time, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", time.Time{}, ErrMalformed
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", time.Time{}, ErrMalformed
	}
	var c struct {
		Iss *string  `json:"iss"`
		Exp *float64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.Iss == nil {
		return "", time.Time{}, ErrMalformed
	}
	var exp time.Time
	if c.Exp != nil && *c.Exp > 0 && *c.Exp < 1e11 {
		exp = time.Unix(int64(*c.Exp), 0)
	}
	return *c.Iss, exp, nil
}

// Authenticator verifies bearer tokens of both kinds.
type Authenticator struct {
	builtin  *Builtin
	oidc     *OIDC // nil without --oidc-issuer
	verified *tokenCache
}

// New returns an Authenticator for built-in tokens and, when oidc is not
// nil, tokens of that OIDC provider. builtin must not be nil.
func New(builtin *Builtin, oidc *OIDC) *Authenticator {
	return &Authenticator{builtin: builtin, oidc: oidc, verified: newTokenCache(builtin.now)}
}

// Builtin returns the built-in token signer, for the token endpoint.
func (a *Authenticator) Builtin() *Builtin { return a.builtin }

// Authenticate returns the principal named by the bearer token in the
// Authorization header value. Errors wrap one of the Err* values above
// and never contain the token. A token whose signature and claims were
// checked recently is not checked again (clients send the same token on
// every request); a built-in token's principal is still looked up.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (identity.Principal, error) {
	tok, err := ParseBearer(header)
	if err != nil {
		return identity.Principal{}, err
	}
	if v, ok := a.verified.get(tok); ok {
		if v.builtin != nil {
			return a.builtin.admit(ctx, *v.builtin)
		}
		return v.principal, nil
	}
	iss, exp, err := peekIssuer(tok)
	if err != nil {
		return identity.Principal{}, err
	}
	switch {
	case iss == BuiltinIssuer:
		c, err := a.builtin.verify(tok)
		if err != nil {
			return identity.Principal{}, err
		}
		a.verified.put(tok, verifiedToken{until: exp, builtin: &c})
		return a.builtin.admit(ctx, c)
	case a.oidc != nil && iss == a.oidc.Issuer():
		p, err := a.oidc.Verify(ctx, tok)
		if err != nil {
			return identity.Principal{}, err
		}
		a.verified.put(tok, verifiedToken{until: exp, principal: p})
		return p, nil
	}
	return identity.Principal{}, ErrUnknownIssuer
}
