// Package restclient is the client half of the Iceberg REST protocol that
// the catalog's own tools speak to a catalog, this one or another: the
// OAuth2 client credentials sign-in, /v1/config (prefix, namespace
// separator, endpoints), JSON requests with a bearer token or signed with
// AWS SigV4 (AWS Glue's endpoint), and refusals decoded from ErrorModel or
// OAuth error bodies. `catalog read` (internal/restread) and `catalog
// import` (internal/catalogimport) both speak through it. It knows nothing
// of the server side.
package restclient

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

// Client is one signed-in (or anonymous) connection to a catalog. Set its
// fields before the first request; Configure fills Prefix, Separator and
// Endpoints.
type Client struct {
	// URI is the catalog's base URI, without a trailing slash.
	URI string
	// Token is the bearer token sent with every request ("" for none).
	Token string
	// SigV4, when set, signs every request with AWS Signature Version 4;
	// no bearer token is sent then, and SignIn is refused.
	SigV4 *SigV4
	// Prefix is the path prefix /v1/config gave ("" when none).
	Prefix string
	// Separator is the namespace separator as it goes in a path, escaped
	// (%1F unless the catalog says otherwise).
	Separator string
	// Endpoints are those /v1/config listed; nil when it listed none.
	Endpoints map[string]bool
	// Header is sent with every request besides Accept and Authorization.
	Header http.Header
	// HTTP sends the requests.
	HTTP *http.Client
	// MaxBody bounds an answer's body (0: 256 MiB); a longer one fails
	// the request.
	MaxBody int64
	// MaxSignInBody bounds the sign-in answer's body (0: MaxBody); a
	// token answer is small, so a server signing in on a client's behalf
	// reads little from a catalog it does not trust.
	MaxSignInBody int64
	// Terse keeps the text of the catalog's refusals and of transport
	// failures out of the errors (only the status and type, or "could not
	// be reached"): for callers that relay errors to someone who must not
	// see what the catalog said, such as a server importing on behalf of
	// a client.
	Terse bool
}

// New is a client for the catalog at uri with HTTP hc (nil: NewHTTP()).
func New(uri string, hc *http.Client) *Client {
	if hc == nil {
		hc = NewHTTP()
	}
	return &Client{URI: strings.TrimRight(uri, "/"), Separator: "%1F", HTTP: hc, MaxBody: defaultMaxBody}
}

// defaultMaxBody bounds an answer when the client sets no bound.
const defaultMaxBody = 256 << 20

// NewHTTP is an HTTP client that follows a redirect only within the same
// scheme and host: a token, a client secret or a SigV4 signature in the
// request must not be carried to another server (Go resends a POST body
// on 307 and 308).
func NewHTTP() *http.Client {
	return &http.Client{CheckRedirect: sameOrigin}
}

// sameOrigin refuses a redirect that leaves the first request's scheme
// and host.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return errors.New("refused a redirect to another server")
	}
	return nil
}

// Error is a refusal a catalog answered, with the fields of its
// ErrorModel (or OAuth error) body.
type Error struct {
	Status  int
	Type    string
	Message string
	Reason  string
	terse   bool
}

// Error is the status, type and the catalog's message and reason, or,
// from a Terse client, the status and type only.
func (e *Error) Error() string {
	if e.terse {
		return fmt.Sprintf("the catalog answered %d %s", e.Status, e.Type)
	}
	msg := fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
	if e.Reason != "" {
		msg += " (reason " + e.Reason + ")"
	}
	return msg
}

// IsStatus reports whether err is an *Error with that status.
func IsStatus(err error, status int) bool {
	var re *Error
	return errors.As(err, &re) && re.Status == status
}

// Supports reports whether the catalog lists endpoint ("GET /v1/{prefix}/...");
// a catalog that lists none is taken to support every one.
func (c *Client) Supports(endpoint string) bool {
	return c.Endpoints == nil || c.Endpoints[endpoint]
}

// Do sends one JSON request to c.URI+path. It fails with an *Error when
// the catalog answers other than 2xx, and with a plain error when it
// cannot be reached or its answer does not decode into out (when out is
// not nil).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := c.URI + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return c.transport(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.headers(req)
	data, status, err := c.send(req, c.MaxBody)
	if err != nil {
		if c.Terse {
			// The path holds the catalog's prefix and names; the
			// caller says which step this was.
			return err
		}
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status/100 != 2 {
		return c.answerError(status, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		if c.Terse {
			// A syntax error quotes the catalog's answer.
			return errors.New("the answer was not valid JSON")
		}
		return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, path, err)
	}
	return nil
}

// send signs req when the client signs with SigV4, sends it and reads
// its body. It fails when the body is longer than limit (<= 0: 256 MiB).
func (c *Client) send(req *http.Request, limit int64) ([]byte, int, error) {
	if c.SigV4 != nil {
		if err := c.SigV4.sign(req.Context(), req); err != nil {
			if c.Terse {
				return nil, 0, errors.New("the request could not be signed")
			}
			return nil, 0, fmt.Errorf("signing the request: %w", err)
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, 0, c.transport(err)
	}
	defer resp.Body.Close()
	if limit <= 0 {
		limit = defaultMaxBody
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, 0, c.transport(err)
	}
	if int64(len(data)) > limit {
		return nil, 0, fmt.Errorf("the answer was longer than %d bytes", limit)
	}
	return data, resp.StatusCode, nil
}

// transport is err as the caller may see it: as it is, or, when Terse,
// only whether it was the context ending.
func (c *Client) transport(err error) error {
	if !c.Terse {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errors.New("the catalog did not answer in time")
	}
	return errors.New("the catalog could not be reached")
}

func (c *Client) headers(req *http.Request) {
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" && c.SigV4 == nil {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
}

// answerError turns a non-2xx body into an *Error: an ErrorModel, an
// OAuth error, or just the status.
func (c *Client) answerError(status int, data []byte) error {
	var em struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Reason  string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &em) == nil && em.Error != nil {
		return &Error{Status: status, Type: c.typeName(status, em.Error.Type), Message: em.Error.Message, Reason: em.Error.Reason, terse: c.Terse}
	}
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(data, &oe) == nil && oe.Error != "" {
		return &Error{Status: status, Type: c.typeName(status, oe.Error), Message: oe.Description, terse: c.Terse}
	}
	return &Error{Status: status, Type: http.StatusText(status), Message: "the answer is not an Iceberg error", terse: c.Terse}
}

// typeName is the error type as given, or, when Terse and it is not a
// plain identifier (it is the catalog's text as much as the message is),
// the status text.
func (c *Client) typeName(status int, typ string) string {
	if !c.Terse {
		return typ
	}
	if typ == "" || len(typ) > 64 || strings.IndexFunc(typ, notIdent) >= 0 {
		return http.StatusText(status)
	}
	return typ
}

func notIdent(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
}
