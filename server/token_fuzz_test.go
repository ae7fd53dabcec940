package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// FuzzTokenEndpoint throws arbitrary requests at POST /v1/oauth/tokens:
// content type, Authorization header, form body and the client's address.
// Whatever arrives, the endpoint must not panic, must not answer 5xx (the
// store works; malformed input is the client's fault), and must answer
// JSON: a token, an OAuth error ({"error": "<code>", ...}) or an Iceberg
// ErrorModel ({"error": {message, type, code}}), with Retry-After on 429
// and 503. Secrets are compared without argon2 (VerifySecret) so that the
// fuzzer spends its time on parsing, not hashing; lockouts do happen.
func FuzzTokenEndpoint(f *testing.F) {
	st := openStore(f, "sqlite")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var svc *service.Service
	b, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: bytes.Repeat([]byte{7}, 32),
		Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc.Admin().PrincipalGeneration(ctx, name)
		})})
	if err != nil {
		f.Fatal(err)
	}
	var known, knownHash string
	svc = service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Tokens: b,
		VerifySecret: func(plain, encoded string) (bool, error) { return encoded == knownHash && plain == known, nil }})
	c, err := svc.Admin().CreatePrincipal(localCtx(), "etl")
	if err != nil {
		f.Fatal(err)
	}
	p, err := st.PrincipalByClientID(context.Background(), c.ClientID)
	if err != nil {
		f.Fatal(err)
	}
	known, knownHash = c.ClientSecret, p.SecretHash
	srv := server.New(svc, server.Config{Logger: quiet, Auth: authn.New(b, nil)})
	tok, err := b.Sign("etl", p.ID, p.SecretGeneration)
	if err != nil {
		f.Fatal(err)
	}

	cc := func(id, secret string) string {
		return url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}}.Encode()
	}
	xchg := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {tok},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "scope": {"catalog"}}.Encode()
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
	}
	const form = "application/x-www-form-urlencoded"
	for _, s := range [][4]string{
		{form, "", cc(c.ClientID, c.ClientSecret), "192.0.2.1:1234"},
		{form, "", cc(c.ClientID, "wrong"), "192.0.2.2:1234"},
		{form, "", cc("lh-nosuchclient0000", "x"), "[2001:db8::1]:443"},
		{form, basic(c.ClientID, c.ClientSecret), "grant_type=client_credentials", "192.0.2.3:1"},
		{form, basic(c.ClientID, "%zz"), "grant_type=client_credentials", "192.0.2.3:1"},
		{form, "Basic !!!", "grant_type=client_credentials", "192.0.2.3:1"},
		{form, "", xchg, "192.0.2.4:1"},
		{form, "Bearer " + tok, xchg, "192.0.2.4:1"},
		{form, basic(c.ClientID, c.ClientSecret), xchg, "192.0.2.5:1"},
		{form, "", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=a.b.c", "192.0.2.4:1"},
		{form, "", "grant_type=client_credentials&grant_type=client_credentials", "x"},
		{form, "", "grant_type=client_credentials&client_id=" + strings.Repeat("a", 300) + "&client_secret=b", ""},
		{form, "", "grant_type=client_credentials&scope=%22&client_id=a&client_secret=b", "[::1]:1"},
		{form, "", "%zz=1", "192.0.2.6:1"},
		{form + "; charset=utf-8", "", "grant_type=password", "192.0.2.6:1"},
		{"application/json", "", `{"grant_type":"client_credentials"}`, "192.0.2.6:1"},
		{"", "", "", ""},
		{"multipart/form-data; boundary=x", "", "--x\r\n", "192.0.2.7:1"},
		{form, "", "grant_type=client_credentials&client_id=\x00&client_secret=\xff", "192.0.2.8:1"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}

	f.Fuzz(func(t *testing.T, contentType, authorization, body, remoteAddr string) {
		req := httptest.NewRequest("POST", "/v1/oauth/tokens", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		req.RemoteAddr = remoteAddr
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)

		if rec.Code >= 500 {
			t.Fatalf("status %d for malformed input: %s", rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("status %d with Content-Type %q: %s", rec.Code, ct, rec.Body)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("status %d, body not a JSON object: %q", rec.Code, rec.Body)
		}
		if rec.Code == 200 {
			var ok struct {
				AccessToken string `json:"access_token"`
				TokenType   string `json:"token_type"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &ok) != nil || ok.AccessToken == "" || ok.TokenType != "bearer" {
				t.Fatalf("200 without a token: %s", rec.Body)
			}
			return
		}
		var code string
		var model struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
			Code    *int    `json:"code"`
		}
		switch {
		case json.Unmarshal(m["error"], &code) == nil && code != "":
			if d, has := m["error_description"]; has {
				var s string
				if json.Unmarshal(d, &s) != nil {
					t.Fatalf("error_description is not a string: %s", rec.Body)
				}
			}
		case json.Unmarshal(m["error"], &model) == nil && model.Message != nil && model.Type != nil && model.Code != nil:
			if *model.Code != rec.Code {
				t.Fatalf("ErrorModel code %d, status %d", *model.Code, rec.Code)
			}
		default:
			t.Fatalf("status %d, neither an OAuth error nor an ErrorModel: %s", rec.Code, rec.Body)
		}
		if rec.Code == 429 || rec.Code == 503 {
			if n, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || n < 1 {
				t.Fatalf("status %d with Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
			}
		}
	})
}
