package restclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// SignIn trades credential (CLIENT_ID:SECRET) for a token with the OAuth2
// client credentials grant at tokenURI ("": URI/v1/oauth/tokens), asking
// for scope ("": catalog), and keeps the token. It fails when the
// credential is malformed, the endpoint refuses it (an *Error) or its
// answer carries no access_token, and when the client signs with SigV4
// (which takes no token).
func (c *Client) SignIn(ctx context.Context, tokenURI, credential, scope string) error {
	if c.SigV4 != nil {
		return errors.New("a client that signs with SigV4 does not sign in with OAuth2")
	}
	id, secret, ok := strings.Cut(credential, ":")
	if !ok || id == "" {
		return errors.New("the credential must be CLIENT_ID:SECRET")
	}
	if tokenURI == "" {
		tokenURI = c.URI + "/v1/oauth/tokens"
	}
	if scope == "" {
		scope = "catalog"
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURI, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("sign-in: %w", c.transport(err))
	}
	c.headers(req)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	limit := c.MaxSignInBody
	if limit <= 0 {
		limit = c.MaxBody
	}
	data, status, err := c.send(req, limit)
	if err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("sign-in: %w", c.answerError(status, data))
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return errors.New("sign-in: the answer carries no access_token")
	}
	c.Token = tok.AccessToken
	return nil
}

// Configure reads /v1/config for warehouse ("" for the default) and
// keeps its prefix, namespace separator and endpoints (overrides before
// defaults). It fails as Do does.
func (c *Client) Configure(ctx context.Context, warehouse string) error {
	q := url.Values{}
	if warehouse != "" {
		q.Set("warehouse", warehouse)
	}
	var cfg struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
		Endpoints []string          `json:"endpoints"`
	}
	if err := c.Do(ctx, http.MethodGet, "/v1/config", q, nil, &cfg); err != nil {
		return err
	}
	get := func(k string) string {
		if v := cfg.Overrides[k]; v != "" {
			return v
		}
		return cfg.Defaults[k]
	}
	c.Prefix = get("prefix")
	if s := get("namespace-separator"); s != "" {
		c.Separator = s
	}
	if cfg.Endpoints != nil {
		c.Endpoints = map[string]bool{}
		for _, ep := range cfg.Endpoints {
			c.Endpoints[ep] = true
		}
	}
	return nil
}

// Base is /v1, then the prefix when there is one: each of its segments
// escaped, the slashes kept (Glue's prefix is catalogs/ACCOUNT).
func (c *Client) Base() string {
	if c.Prefix == "" {
		return "/v1"
	}
	segs := strings.Split(c.Prefix, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/v1/" + strings.Join(segs, "/")
}

// NamespacePath is the namespace path segment: each level escaped,
// joined by the catalog's separator.
func (c *Client) NamespacePath(ns []string) string {
	parts := make([]string, len(ns))
	for i, l := range ns {
		parts[i] = url.PathEscape(l)
	}
	sep := c.Separator
	if sep == "" {
		sep = "%1F"
	}
	return strings.Join(parts, sep)
}

// NamespaceParam is a namespace as a query value (the parent of a
// listing): the levels joined by the unescaped separator.
func (c *Client) NamespaceParam(ns []string) string {
	sep, err := url.PathUnescape(c.Separator)
	if err != nil || sep == "" {
		sep = "\x1f"
	}
	return strings.Join(ns, sep)
}

// NamespaceURL is /v1/{prefix}/namespaces/{ns}.
func (c *Client) NamespaceURL(ns []string) string {
	return c.Base() + "/namespaces/" + c.NamespacePath(ns)
}
