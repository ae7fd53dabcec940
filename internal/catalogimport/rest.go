package catalogimport

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/lakehold/catalog/internal/restclient"
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
	// SigV4, when set, signs every request with AWS Signature Version 4
	// (AWS Glue's Iceberg REST endpoint) instead of any OAuth2 sign-in or
	// token, which must then not be given.
	SigV4 *restclient.SigV4
	// HTTP is the client to use (nil: restclient.NewHTTP(), which follows
	// no redirect to another server).
	HTTP *http.Client
	// MaxBody bounds each answer and MaxSignInBody the sign-in's (0: the
	// restclient defaults, 256 MiB): a server importing on a client's
	// behalf sets small ones.
	MaxBody, MaxSignInBody int64
	// Terse keeps the catalog's error text out of the errors (see
	// restclient.Client.Terse).
	Terse bool
}

// connect signs in (when given a credential) and reads /v1/config for the
// prefix, the namespace separator and the endpoints. It fails when given
// two ways to authenticate, and when the sign-in or the config request is
// refused or unreachable.
func connect(ctx context.Context, e Endpoint) (*restclient.Client, error) {
	if e.URI == "" {
		return nil, errors.New("no catalog URI")
	}
	if e.Credential != "" && e.Token != "" {
		return nil, errors.New("give a credential or a token, not both")
	}
	if e.SigV4 != nil && (e.Credential != "" || e.Token != "") {
		return nil, errors.New("SigV4 signing takes no OAuth2 credential or token")
	}
	c := restclient.New(e.URI, e.HTTP)
	c.Token, c.Terse, c.SigV4 = e.Token, e.Terse, e.SigV4
	if e.MaxBody > 0 {
		c.MaxBody = e.MaxBody
	}
	c.MaxSignInBody = e.MaxSignInBody
	// The import reads v4 tables as they are and needs no storage
	// credentials, so it asks for none.
	c.Header = http.Header{"X-Iceberg-Column-Files": {"true"}}
	if e.Credential != "" {
		if err := c.SignIn(ctx, e.OAuth2ServerURI, e.Credential, e.Scope); err != nil {
			return nil, err
		}
	}
	if err := c.Configure(ctx, e.Warehouse); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// isStatus reports whether err is a catalog's refusal with that status.
func isStatus(err error, status int) bool { return restclient.IsStatus(err, status) }
