package restclient

import (
	"context"
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
