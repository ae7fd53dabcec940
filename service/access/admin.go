package access

import (
	"context"
	"log/slog"
	"time"

	"github.com/lakehold/catalog/internal/authn/secret"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/store"
)

// AdminStore is the part of the store that roles, grants and principals
// live in.
type AdminStore interface {
	store.Principals
	store.RBACStore
}

// AdminOptions configure an Admin; zero fields take defaults.
type AdminOptions struct {
	// Tokens signs the catalog's own access tokens; nil when
	// authentication is off (IssueToken and RefreshToken then refuse).
	Tokens TokenIssuer
	// MaxSessionAge bounds a sign-in session (default
	// DefaultMaxSessionAge).
	MaxSessionAge time.Duration
	// VerifySecret checks a client secret against its stored hash
	// (default secret.Verify, argon2id).
	VerifySecret func(plain, encoded string) (bool, error)
	// Now is the clock of session ages (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Admin manages roles, grants, role assignments and built-in principals,
// and issues the principals' tokens: the access-control operations of the
// management API and the token endpoint. Every management operation needs
// manage-grants on the server, decided by the Authorizer it is given.
type Admin struct {
	store         AdminStore
	authz         Authorizer
	tokens        TokenIssuer
	maxSessionAge time.Duration
	verifySecret  func(plain, encoded string) (bool, error)
	now           func() time.Time
	log           *slog.Logger
}

// NewAdmin returns an Admin over st that authorizes with authz.
func NewAdmin(st AdminStore, authz Authorizer, o AdminOptions) *Admin {
	if o.MaxSessionAge <= 0 {
		o.MaxSessionAge = DefaultMaxSessionAge
	}
	if o.VerifySecret == nil {
		o.VerifySecret = secret.Verify
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Admin{store: st, authz: authz, tokens: o.Tokens, maxSessionAge: o.MaxSessionAge,
		verifySecret: o.VerifySecret, now: o.Now, log: o.Logger}
}

// authorize checks that the caller in ctx holds priv on r.
func (m *Admin) authorize(ctx context.Context, priv Privilege, r Resource) error {
	return m.authz.Authorize(ctx, identity.From(ctx), priv, r)
}
