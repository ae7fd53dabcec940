package catalogimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Endpoint says how to reach one Iceberg REST catalog and sign in to it.
type Endpoint struct {
	// URI is the catalog's base URI (the one clients are given; /v1 is
	// appended); Warehouse is sent to /v1/config ("" for the default).
	URI, Warehouse string
	// Credential is CLIENT_ID:SECRET traded for a token with the OAuth2
	// client credentials grant; Token is a bearer token sent as is.
	Credential, Token string
	// OAuth2ServerURI is the token endpoint (default URI/v1/oauth/tokens);
	// Scope is the scope asked for (default "catalog").
	OAuth2ServerURI, Scope string
	// HTTP is the client to use (nil: a plain one).
	HTTP *http.Client
}

// client is the part of the Iceberg REST protocol the import speaks, on
// either side: sign-in, config and JSON requests under the prefix.
type client struct {
	uri       string // base, without a trailing slash
	prefix    string // from /v1/config; "" when none
	sep       string // namespace separator as it goes in a path (escaped)
	token     string
	endpoints map[string]bool // from /v1/config; nil when the catalog lists none
	hc        *http.Client
}

// RESTError is a refusal a catalog answered, with the fields of its
// ErrorModel (or OAuth error) body.
type RESTError struct {
	Status  int
	Type    string
	Message string
}

func (e *RESTError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

// isStatus reports whether err is a RESTError with that status.
func isStatus(err error, status int) bool {
	var re *RESTError
	return errors.As(err, &re) && re.Status == status
}

// connect signs in (when given a credential) and reads /v1/config for the
// prefix, the namespace separator and the endpoints. It fails when the
// sign-in or the config request is refused or unreachable.
func connect(ctx context.Context, e Endpoint) (*client, error) {
	if e.URI == "" {
		return nil, errors.New("no catalog URI")
	}
	if e.Credential != "" && e.Token != "" {
		return nil, errors.New("give a credential or a token, not both")
	}
	c := &client{uri: strings.TrimRight(e.URI, "/"), token: e.Token, sep: "%1F", hc: e.HTTP}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if e.Credential != "" {
		if err := c.signIn(ctx, e); err != nil {
			return nil, err
		}
	}
	if err := c.configure(ctx, e.Warehouse); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// do sends one JSON request; a non-2xx answer becomes a *RESTError and
// out, when not nil, receives the decoded body.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := c.uri + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.headers(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return answerError(resp.StatusCode, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, path, err)
	}
	return nil
}

// headers: the import reads v4 tables as they are (X-Iceberg-Column-Files)
// and needs no storage credentials, so it asks for none.
func (c *client) headers(req *http.Request) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Iceberg-Column-Files", "true")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// answerError turns a non-2xx body into a *RESTError: an ErrorModel, an
// OAuth error, or just the status.
func answerError(status int, data []byte) error {
	var em struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &em) == nil && em.Error != nil {
		return &RESTError{Status: status, Type: em.Error.Type, Message: em.Error.Message}
	}
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(data, &oe) == nil && oe.Error != "" {
		return &RESTError{Status: status, Type: oe.Error, Message: oe.Description}
	}
	return &RESTError{Status: status, Type: http.StatusText(status), Message: "the answer is not an Iceberg error"}
}

// signIn trades client credentials for a token (OAuth2 client
// credentials grant). It fails when the token endpoint refuses them.
func (c *client) signIn(ctx context.Context, e Endpoint) error {
	id, secret, ok := strings.Cut(e.Credential, ":")
	if !ok || id == "" {
		return errors.New("the credential must be CLIENT_ID:SECRET")
	}
	tokenURI := e.OAuth2ServerURI
	if tokenURI == "" {
		tokenURI = c.uri + "/v1/oauth/tokens"
	}
	scope := e.Scope
	if scope == "" {
		scope = "catalog"
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURI, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sign-in: %w", answerError(resp.StatusCode, data))
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return errors.New("sign-in: the answer carries no access_token")
	}
	c.token = tok.AccessToken
	return nil
}

// configure reads /v1/config for the warehouse: the prefix, the
// namespace separator (an escaped string, %1F unless the catalog says
// otherwise) and the endpoints it lists.
func (c *client) configure(ctx context.Context, warehouse string) error {
	q := url.Values{}
	if warehouse != "" {
		q.Set("warehouse", warehouse)
	}
	var cfg struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
		Endpoints []string          `json:"endpoints"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/config", q, nil, &cfg); err != nil {
		return err
	}
	get := func(k string) string {
		if v := cfg.Overrides[k]; v != "" {
			return v
		}
		return cfg.Defaults[k]
	}
	c.prefix = get("prefix")
	if s := get("namespace-separator"); s != "" {
		c.sep = s
	}
	if cfg.Endpoints != nil {
		c.endpoints = map[string]bool{}
		for _, ep := range cfg.Endpoints {
			c.endpoints[ep] = true
		}
	}
	return nil
}

// supports reports whether the catalog lists endpoint ("GET /v1/{prefix}/...");
// a catalog that lists none is taken to support every one.
func (c *client) supports(endpoint string) bool {
	return c.endpoints == nil || c.endpoints[endpoint]
}

// base is /v1, then the prefix when there is one: each of its segments
// escaped, the slashes kept (Glue's prefix is catalogs/ACCOUNT).
func (c *client) base() string {
	if c.prefix == "" {
		return "/v1"
	}
	segs := strings.Split(c.prefix, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/v1/" + strings.Join(segs, "/")
}

// nsPath is the namespace path segment: each level escaped, joined by the
// catalog's separator.
func (c *client) nsPath(ns []string) string {
	parts := make([]string, len(ns))
	for i, l := range ns {
		parts[i] = url.PathEscape(l)
	}
	return strings.Join(parts, c.sep)
}

// nsParam is a namespace as a query value (the parent of a listing): the
// levels joined by the unescaped separator.
func (c *client) nsParam(ns []string) string {
	sep, err := url.PathUnescape(c.sep)
	if err != nil {
		sep = "\x1f"
	}
	return strings.Join(ns, sep)
}

// namespaceURL is /v1/{prefix}/namespaces/{ns}.
func (c *client) namespaceURL(ns []string) string {
	return c.base() + "/namespaces/" + c.nsPath(ns)
}
