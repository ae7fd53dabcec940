package restclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedirectToAnotherServerRefused: a token endpoint that redirects
// (307, which resends the body) to another server does not get the client
// secret carried there.
func TestRedirectToAnotherServerRefused(t *testing.T) {
	var leaked string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		leaked = string(b) + r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{"access_token":"t"}`))
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/oauth/tokens", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	c := New(first.URL, nil)
	err := c.SignIn(context.Background(), "", "id:s3cret", "")
	require.ErrorContains(t, err, "refused a redirect to another server")
	require.Empty(t, leaked)

	// Within one server a redirect is followed.
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			_, _ = w.Write([]byte(`{"access_token":"t"}`))
			return
		}
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	}))
	defer same.Close()
	c = New(same.URL, nil)
	require.NoError(t, c.SignIn(context.Background(), "", "id:s3cret", ""))
	require.Equal(t, "t", c.Token)
}

// TestTerseErrors: a terse client keeps the catalog's message, reason and
// odd type names out of its errors, and says only that a catalog could
// not be reached; a plain one keeps them for the person at the terminal.
func TestTerseErrors(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		typ := "ForbiddenException"
		if r.URL.Path == "/odd" {
			typ = "at /srv/secret/path"
		}
		_, _ = w.Write([]byte(`{"error":{"message":"denied for token abc at /srv/x","type":"` + typ + `","code":403}}`))
	}))
	defer hs.Close()
	c := New(hs.URL, nil)
	err := c.Do(context.Background(), http.MethodGet, "/x", nil, nil, nil)
	require.ErrorContains(t, err, "denied for token abc")
	require.True(t, IsStatus(err, http.StatusForbidden))

	c.Terse = true
	err = c.Do(context.Background(), http.MethodGet, "/x", nil, nil, nil)
	require.EqualError(t, err, "the catalog answered 403 ForbiddenException")
	require.True(t, IsStatus(err, http.StatusForbidden))
	err = c.Do(context.Background(), http.MethodGet, "/odd", nil, nil, nil)
	require.EqualError(t, err, "the catalog answered 403 Forbidden")

	c = New("http://127.0.0.1:1", nil)
	c.Terse = true
	err = c.Do(context.Background(), http.MethodGet, "/v1/config", nil, nil, nil)
	require.Error(t, err)
	require.False(t, strings.Contains(err.Error(), "127.0.0.1:1/v1"), err.Error())
	require.Contains(t, err.Error(), "could not be reached")
}

// TestTerseWording: a terse client names neither the request's path (it
// holds the catalog's prefix and namespace names) nor quotes an answer
// that is not JSON; a plain one does both.
func TestTerseWording(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<html>secret-page</html>`))
	}))
	defer hs.Close()
	var out map[string]any
	c := New(hs.URL, nil)
	err := c.Do(context.Background(), http.MethodGet, "/v1/acct-42/namespaces/hr", nil, nil, &out)
	require.ErrorContains(t, err, "/v1/acct-42/namespaces/hr")

	c.Terse = true
	err = c.Do(context.Background(), http.MethodGet, "/v1/acct-42/namespaces/hr", nil, nil, &out)
	require.EqualError(t, err, "the answer was not valid JSON")
}

// TestBodyBounds: an answer longer than MaxBody fails the request rather
// than being cut, and the sign-in answer has its own, smaller bound.
func TestBodyBounds(t *testing.T) {
	long := `{"access_token":"t","pad":"` + strings.Repeat("x", 2000) + `"}`
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(long))
	}))
	defer hs.Close()
	c := New(hs.URL, nil)
	c.Terse = true
	var out map[string]any
	require.NoError(t, c.Do(context.Background(), http.MethodGet, "/x", nil, nil, &out))
	require.NoError(t, c.SignIn(context.Background(), "", "id:s", ""))

	c.MaxSignInBody = 1000
	require.EqualError(t, c.SignIn(context.Background(), "", "id:s", ""), "sign-in: the answer was longer than 1000 bytes")
	require.NoError(t, c.Do(context.Background(), http.MethodGet, "/x", nil, nil, &out), "MaxSignInBody bounds only the sign-in")

	c.MaxBody = int64(len(long)) - 1
	require.EqualError(t, c.Do(context.Background(), http.MethodGet, "/x", nil, nil, &out), fmt.Sprintf("the answer was longer than %d bytes", len(long)-1))
	c.MaxBody = int64(len(long))
	require.NoError(t, c.Do(context.Background(), http.MethodGet, "/x", nil, nil, &out), "exactly MaxBody is read whole")
}
