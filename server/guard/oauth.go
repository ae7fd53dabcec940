package guard

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/server/httperr"
	"github.com/lakehold/catalog/service"
)

// TokenPath is the OAuth2 token endpoint of the Iceberg REST spec.
const TokenPath = "/v1/oauth/tokens"

// oauthError is the RFC 6749 §5.2 error body the token endpoint answers
// with instead of an Iceberg ErrorModel (clients parse this shape there).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
	Scope           string `json:"scope,omitempty"`
}

func writeOAuth(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func oauthFail(w http.ResponseWriter, status int, code, desc string) {
	writeOAuth(w, status, oauthError{Error: code, Description: desc})
}

// Token serves POST /v1/oauth/tokens: the client credentials grant for
// built-in service principals, with the credentials in the form (what the
// Java and Python clients send) or in HTTP Basic auth, admitted by the
// sign-in gate (signIn: 429 when locked out, 503 when no verification slot
// is free, both OAuth errors with Retry-After). Server failures (503,
// 500) are answered as Iceberg errors.
func (g *Guard) Token(w http.ResponseWriter, r *http.Request) {
	if g.auth == nil {
		oauthFail(w, http.StatusBadRequest, "invalid_request", "authentication is not enabled on this catalog")
		return
	}
	form, ok := tokenForm(w, r)
	if !ok {
		return
	}
	switch gt := form.Get("grant_type"); gt {
	case "client_credentials":
	case tokenExchange:
		g.exchange(w, r, form)
		return
	case "":
		oauthFail(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
		return
	default:
		oauthFail(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials or token-exchange")
		return
	}
	scope, hasScope := form["scope"]
	if hasScope && !validScope(scope[0]) {
		oauthFail(w, http.StatusBadRequest, "invalid_scope", "scope holds characters RFC 6749 does not allow")
		return
	}
	id, secret, basic, ok := clientCredentials(w, r, form)
	if !ok {
		return
	}
	tok, ok := g.signIn(w, r, id, secret, basic)
	if !ok {
		return
	}
	issued(w, tok, hasScope)
}

const (
	tokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
)

// issued writes a successful token response.
func issued(w http.ResponseWriter, tok *service.IssuedToken, scope bool) {
	resp := tokenResponse{AccessToken: tok.AccessToken, TokenType: "bearer", ExpiresIn: int64(tok.ExpiresIn.Seconds()),
		IssuedTokenType: accessTokenType}
	if scope {
		resp.Scope = "catalog"
	}
	writeOAuth(w, http.StatusOK, resp)
}

// exchange serves the token-exchange grant (RFC 8693) the way the Java
// client uses it to refresh: a still-valid built-in access token as
// subject_token buys a fresh one for the same principal, in the same
// session (auth_time kept), until the session is MaxSessionAge old; then
// invalid_grant. Other subject tokens (OIDC) are refused with
// invalid_grant: their refresh belongs to the provider.
//
// A request that also authenticates the client (HTTP Basic, or
// client_secret in the form) is a sign-in: the credentials are checked as
// for the client-credentials grant, through the same gate, and a token of
// a new session is issued for that client, whatever the subject token.
// This is how the Java client carries on once an exchange is refused: it
// retries the exchange with its credential in Basic auth.
func (g *Guard) exchange(w http.ResponseWriter, r *http.Request, form url.Values) {
	subject := form.Get("subject_token")
	if subject == "" {
		oauthFail(w, http.StatusBadRequest, "invalid_request", "subject_token is required")
		return
	}
	if tt := form.Get("subject_token_type"); tt != "" && tt != accessTokenType {
		oauthFail(w, http.StatusBadRequest, "invalid_request", "subject_token_type must be an access token")
		return
	}
	_, hasScope := form["scope"]
	if hasScope && !validScope(form.Get("scope")) {
		oauthFail(w, http.StatusBadRequest, "invalid_scope", "scope holds characters RFC 6749 does not allow")
		return
	}
	if _, _, basic := r.BasicAuth(); basic || form.Get("client_secret") != "" {
		id, secret, basic, ok := clientCredentials(w, r, form)
		if !ok {
			return
		}
		tok, ok := g.signIn(w, r, id, secret, basic)
		if ok {
			issued(w, tok, hasScope)
		}
		return
	}
	p, err := g.auth.Authenticate(r.Context(), "Bearer "+subject)
	if errors.Is(err, authn.ErrUnavailable) {
		authFailed(w, r, err)
		return
	}
	if err != nil || p.Source != identity.SourceBuiltin {
		oauthFail(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid token of this catalog")
		return
	}
	tok, err := g.svc.Admin().RefreshToken(r.Context(), p.Subject, p.AuthTime)
	if errors.Is(err, service.ErrSessionExpired) {
		g.signin.refused.WithLabelValues(refusedSessionExpired).Inc()
		oauthFail(w, http.StatusBadRequest, "invalid_grant", "the session is older than the maximum session age; sign in again with the client credentials")
		return
	}
	if fault.KindOf(err) == fault.Unauthorized {
		oauthFail(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid token of this catalog")
		return
	}
	if err != nil {
		httperr.Write(w, r, err)
		return
	}
	issued(w, tok, hasScope)
}

// tokenForm parses the form body; parameters may not repeat (RFC 6749 §3.2).
func tokenForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		oauthFail(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return nil, false
	}
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httperr.Write(w, r, httperr.BodyTooLarge(mbe.Limit))
			return nil, false
		}
		oauthFail(w, http.StatusBadRequest, "invalid_request", "the form body is malformed")
		return nil, false
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			oauthFail(w, http.StatusBadRequest, "invalid_request", "parameter "+url.QueryEscape(k)+" is repeated")
			return nil, false
		}
	}
	return r.PostForm, true
}

// clientCredentials takes the client id and secret from HTTP Basic auth
// (form-urlencoded inside, RFC 6749 §2.3.1) or from the form. Both at once
// are accepted only when they agree.
func clientCredentials(w http.ResponseWriter, r *http.Request, form url.Values) (id, secret string, basic, ok bool) {
	id, secret = form.Get("client_id"), form.Get("client_secret")
	if bu, bp, has := r.BasicAuth(); has {
		u, err1 := url.QueryUnescape(bu)
		p, err2 := url.QueryUnescape(bp)
		if err1 != nil || err2 != nil {
			oauthFail(w, http.StatusBadRequest, "invalid_request", "malformed Basic credentials")
			return "", "", true, false
		}
		if (id != "" && id != u) || (secret != "" && secret != p) {
			oauthFail(w, http.StatusBadRequest, "invalid_request", "client credentials given twice and differently")
			return "", "", true, false
		}
		id, secret, basic = u, p, true
	}
	if id == "" || secret == "" {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="lakehold"`)
		}
		oauthFail(w, http.StatusUnauthorized, "invalid_client", "client_id and client_secret are required")
		return "", "", basic, false
	}
	return id, secret, basic, true
}

// validScope checks RFC 6749 §3.3 scope syntax: space-separated tokens of
// %x21 / %x23-5B / %x5D-7E. Any valid scope is granted as "catalog", the
// only scope there is (clients send "catalog" or their own role scopes).
func validScope(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != ' ' && (c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e) {
			return false
		}
	}
	return true
}
