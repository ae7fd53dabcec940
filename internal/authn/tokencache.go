package authn

import (
	"sync"
	"time"

	"github.com/lakehold/catalog/internal/identity"
)

// verifiedToken is what checking a token's signature and claims yielded.
type verifiedToken struct {
	until     time.Time // the token's exp, capped at tokenCacheTTL from the check
	builtin   *builtinClaims
	principal identity.Principal // OIDC tokens
}

const (
	// tokenCacheTTL bounds how long a check is reused; the token's own
	// expiry is always honoured.
	tokenCacheTTL = time.Minute
	// tokenCacheSize bounds the entries; a full cache starts over.
	tokenCacheSize = 8192
)

// tokenCache remembers verified tokens for this replica only. It is an
// optimisation: a miss re-checks the token, so replicas never depend on it.
type tokenCache struct {
	mu  sync.Mutex
	m   map[string]verifiedToken
	now func() time.Time
}

func newTokenCache(now func() time.Time) *tokenCache {
	if now == nil {
		now = time.Now
	}
	return &tokenCache{m: map[string]verifiedToken{}, now: now}
}

func (c *tokenCache) get(tok string) (verifiedToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[tok]
	if !ok {
		return verifiedToken{}, false
	}
	if !c.now().Before(v.until) {
		delete(c.m, tok)
		return verifiedToken{}, false
	}
	return v, true
}

// put remembers v until the token expires or tokenCacheTTL passes; a token
// without exp is not remembered.
func (c *tokenCache) put(tok string, v verifiedToken) {
	if v.until.IsZero() {
		return
	}
	if limit := c.now().Add(tokenCacheTTL); v.until.After(limit) {
		v.until = limit
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= tokenCacheSize {
		c.m = map[string]verifiedToken{}
	}
	c.m[tok] = v
}
