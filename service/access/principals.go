package access

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lakehold/catalog/internal/authn/secret"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// TokenIssuer signs the catalog's own access tokens (internal/authn's
// Builtin implements it). The service only decides whom to issue for.
type TokenIssuer interface {
	// SignSession issues a token for the principal name with its id and
	// secret generation, for a session that began at authTime (zero: now;
	// its auth_time claim), valid for Lifetime or until notAfter if that
	// is earlier (zero: no bound); expiresIn is how long it is valid. It
	// fails only if the random source does.
	SignSession(name, id string, generation int64, authTime, notAfter time.Time) (token string, expiresIn time.Duration, err error)
	// Lifetime is how long issued tokens are valid.
	Lifetime() time.Duration
	// Forget drops any cached state of name, so that a rotation or
	// deletion made on this replica takes effect at once.
	Forget(name string)
}

// PrincipalInfo describes a built-in service principal; never its secret.
type PrincipalInfo struct {
	Name             string
	ClientID         string
	SecretGeneration int64
	CreatedAt        time.Time
	RotatedAt        time.Time
}

// PrincipalCredentials are what a principal presents at the token
// endpoint. ClientSecret exists only in the create and rotate answers.
type PrincipalCredentials struct {
	Name         string
	ClientID     string
	ClientSecret string
}

// IssuedToken is the answer of the token endpoint.
type IssuedToken struct {
	AccessToken string
	ExpiresIn   time.Duration
}

// MaxPrincipalNameBytes bounds principal names.
const MaxPrincipalNameBytes = 128

// validatePrincipalName allows letters, digits and ". _ - @": the name is
// the token subject and appears in logs and grants.
func validatePrincipalName(name string) error {
	if name == "" || len(name) > MaxPrincipalNameBytes {
		return fault.New(fault.BadRequest, "Invalid principal name: it must be 1 to %d bytes long", MaxPrincipalNameBytes)
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '@'
		if !ok {
			return fault.New(fault.BadRequest, "Invalid principal name: only letters, digits and . _ - @ are allowed")
		}
	}
	return nil
}

func principalInfo(p *store.Principal) PrincipalInfo {
	return PrincipalInfo{Name: p.Name, ClientID: p.ClientID, SecretGeneration: p.SecretGeneration, CreatedAt: p.CreatedAt, RotatedAt: p.RotatedAt}
}

// principalErr maps store errors of principal operations.
func principalErr(err error, name string) error {
	var ae *store.AlreadyExistsError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae), errors.Is(err, store.ErrAlreadyExists):
		return fault.Wrap(fault.AlreadyExists, err, "Principal already exists: %s", name)
	case errors.Is(err, store.ErrNotFound):
		return fault.Wrap(fault.NotFound, err, "Principal does not exist: %s", name)
	}
	return storefault.Of(err, name)
}

// DefaultMaxSessionAge is the default of AdminOptions.MaxSessionAge: a day's
// work, after which a client signs in again with its credentials.
const DefaultMaxSessionAge = 12 * time.Hour

// secretHashParams may be lowered by tests.
var secretHashParams = secret.DefaultParams

// newSecret returns a fresh secret and its hash.
func newSecret() (plain, hash string, err error) {
	if plain, err = secret.New(); err != nil {
		return "", "", fault.Wrap(fault.Internal, err, "Internal server error")
	}
	if hash, err = secret.Hash(plain, secretHashParams); err != nil {
		return "", "", fault.Wrap(fault.Internal, err, "Internal server error")
	}
	return plain, hash, nil
}

// manageGrants checks the privilege every principal operation needs.
func (m *Admin) manageGrants(ctx context.Context) error {
	return m.authorize(ctx, PrivManageGrants, Resource{Kind: ResourceServer})
}

// CreatePrincipal creates a built-in service principal and returns its
// client id and secret; the secret is never retrievable again. It fails
// with fault.BadRequest for an invalid name, fault.AlreadyExists when the name
// is taken, and fault.Forbidden without manage-grants on the server.
func (m *Admin) CreatePrincipal(ctx context.Context, name string) (*PrincipalCredentials, error) {
	if err := m.manageGrants(ctx); err != nil {
		return nil, err
	}
	if err := validatePrincipalName(name); err != nil {
		return nil, err
	}
	plain, hash, err := newSecret()
	if err != nil {
		return nil, err
	}
	clientID, err := secret.NewClientID()
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "Internal server error")
	}
	p := &store.Principal{Name: name, ClientID: clientID, SecretHash: hash}
	if err := m.store.PrincipalCreate(ctx, p); err != nil {
		return nil, principalErr(err, name)
	}
	m.forgetPrincipal(name) // a deleted namesake may still be cached
	return &PrincipalCredentials{Name: name, ClientID: clientID, ClientSecret: plain}, nil
}

// ListPrincipals returns one page of principals by name. It fails with
// fault.BadRequest for a page token it did not issue and fault.Forbidden
// without manage-grants on the server.
func (m *Admin) ListPrincipals(ctx context.Context, page store.Page) ([]PrincipalInfo, string, error) {
	if err := m.manageGrants(ctx); err != nil {
		return nil, "", err
	}
	ps, next, err := m.store.PrincipalList(ctx, page)
	if err != nil {
		return nil, "", storefault.Of(err, "")
	}
	out := make([]PrincipalInfo, len(ps))
	for i, p := range ps {
		out[i] = principalInfo(p)
	}
	return out, next, nil
}

// GetPrincipal describes one principal. It fails with fault.NotFound when
// there is none of that name and fault.Forbidden without manage-grants.
func (m *Admin) GetPrincipal(ctx context.Context, name string) (*PrincipalInfo, error) {
	if err := m.manageGrants(ctx); err != nil {
		return nil, err
	}
	p, err := m.store.PrincipalGet(ctx, name)
	if err != nil {
		return nil, principalErr(err, name)
	}
	info := principalInfo(p)
	return &info, nil
}

// RotatePrincipalSecret replaces the principal's secret and returns the new
// one. The old secret stops working at once; tokens issued under it stop
// working on this replica at once and on others within the generation
// cache TTL (5 s). It fails with fault.NotFound or fault.Forbidden.
func (m *Admin) RotatePrincipalSecret(ctx context.Context, name string) (*PrincipalCredentials, error) {
	if err := m.manageGrants(ctx); err != nil {
		return nil, err
	}
	plain, hash, err := newSecret()
	if err != nil {
		return nil, err
	}
	p, err := m.store.PrincipalRotate(ctx, name, hash)
	if err != nil {
		return nil, principalErr(err, name)
	}
	m.forgetPrincipal(name)
	return &PrincipalCredentials{Name: name, ClientID: p.ClientID, ClientSecret: plain}, nil
}

// DeletePrincipal removes the principal; its secret and tokens stop
// working as for a rotation. It fails with fault.NotFound or fault.Forbidden.
func (m *Admin) DeletePrincipal(ctx context.Context, name string) error {
	if err := m.manageGrants(ctx); err != nil {
		return err
	}
	if err := m.store.PrincipalDelete(ctx, name); err != nil {
		return principalErr(err, name)
	}
	m.forgetPrincipal(name)
	return nil
}

func (m *Admin) forgetPrincipal(name string) {
	if m.tokens != nil {
		m.tokens.Forget(name)
	}
}

// PrincipalGeneration returns the id and secret generation of a principal
// for the token check of internal/authn. It is not authorized: it serves
// authentication itself. It fails with fault.NotFound when the principal is
// gone, and fault.Unavailable or fault.Internal when the store fails.
func (m *Admin) PrincipalGeneration(ctx context.Context, name string) (string, int64, error) {
	p, err := m.store.PrincipalGet(ctx, name)
	if err != nil {
		return "", 0, principalErr(err, name)
	}
	return p.ID, p.SecretGeneration, nil
}

// dummyHash is compared against when the client id is unknown, so that a
// wrong id takes as long as a wrong secret and ids cannot be probed: it has
// the parameters every stored hash is made with (secretHashParams), so one
// verification costs the same time and memory. It is made on first use,
// which costs that one request a hash more.
var dummyHash = sync.OnceValue(func() string {
	h, _ := secret.Hash("no such client", secretHashParams)
	return h
})

// errInvalidClient is the one answer to wrong client ids and secrets.
func errInvalidClient() error {
	return fault.New(fault.Unauthorized, "Invalid client credentials")
}

// IssueToken checks a client id and secret and issues an access token for
// the principal, starting a session of at most AdminOptions.MaxSessionAge. It
// verifies exactly one argon2id hash whether or not the client id exists.
// It does not bound how many verifications run at once or how often a
// client may fail: the token endpoint does (internal/signin). It fails with
// fault.Unauthorized for an unknown client id or a wrong secret (one message
// for both), fault.BadRequest when the catalog issues no tokens
// (authentication off), and fault.Unavailable when the store cannot be
// reached.
func (m *Admin) IssueToken(ctx context.Context, clientID, clientSecret string) (*IssuedToken, error) {
	if m.tokens == nil {
		return nil, fault.New(fault.BadRequest, "authentication is not enabled on this catalog")
	}
	p, err := m.store.PrincipalByClientID(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		_, _ = m.verifySecret(clientSecret, dummyHash())
		return nil, errInvalidClient()
	}
	if err != nil {
		return nil, storefault.Of(err, "")
	}
	ok, err := m.verifySecret(clientSecret, p.SecretHash)
	if err != nil {
		m.log.ErrorContext(ctx, "stored secret hash is malformed", "principal", p.Name)
		return nil, errInvalidClient()
	}
	if !ok {
		return nil, errInvalidClient()
	}
	now := m.now()
	return m.sign(p, now, now.Add(m.maxSessionAge))
}

// ErrSessionExpired is wrapped by the RefreshToken error of a session older
// than AdminOptions.MaxSessionAge.
var ErrSessionExpired = errors.New("the session is older than the maximum session age")

// RefreshToken issues a fresh token for a built-in principal whose current
// token the caller has already verified (the token-exchange grant Java
// clients use to refresh before expiry), in the same session: the new
// token keeps authTime, the session start of the old one, and expires no
// later than authTime + AdminOptions.MaxSessionAge. It fails with
// fault.Unauthorized when the principal is gone, or, wrapping
// ErrSessionExpired, when the session is that old already (or authTime is
// zero); and with fault.BadRequest when the catalog issues no tokens.
func (m *Admin) RefreshToken(ctx context.Context, name string, authTime time.Time) (*IssuedToken, error) {
	if m.tokens == nil {
		return nil, fault.New(fault.BadRequest, "authentication is not enabled on this catalog")
	}
	end := authTime.Add(m.maxSessionAge)
	if authTime.IsZero() || !m.now().Before(end) {
		return nil, fault.Wrap(fault.Unauthorized, ErrSessionExpired, "The session is older than %s; sign in again with the client credentials", m.maxSessionAge)
	}
	p, err := m.store.PrincipalGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalidClient()
	}
	if err != nil {
		return nil, storefault.Of(err, "")
	}
	return m.sign(p, authTime, end)
}

// sign issues a token for p in the session that began at authTime and
// ends at end.
func (m *Admin) sign(p *store.Principal, authTime, end time.Time) (*IssuedToken, error) {
	tok, life, err := m.tokens.SignSession(p.Name, p.ID, p.SecretGeneration, authTime, end)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "Internal server error")
	}
	return &IssuedToken{AccessToken: tok, ExpiresIn: life}, nil
}
