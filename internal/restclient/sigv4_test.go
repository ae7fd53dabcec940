package restclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/sigv4test"
)

const (
	testKeyID  = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// glueClient is a client of the stand-in Glue that signs with the
// default chain (its environment, as sigv4test.SetEnv set it).
func glueClient(t *testing.T, g *sigv4test.Glue) *Client {
	t.Helper()
	sig, err := LoadSigV4(context.Background(), "eu-west-1", "")
	require.NoError(t, err)
	require.Equal(t, "glue", sig.Name)
	c := New(g.URL, nil)
	c.SigV4 = sig
	return c
}

// newGlue is the stand-in (fake: AWS Glue cannot run offline), verifying
// signatures made with testKeyID and testSecret for eu-west-1.
func newGlue(t *testing.T) *sigv4test.Glue {
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	return sigv4test.NewGlue(t, creds, "eu-west-1", "123456789012", sigv4test.Table{Namespace: "sales", Name: "orders",
		MetadataLocation: "s3://b/sales/orders/metadata/1.metadata.json"})
}

// TestSigV4Accepted: requests signed with the default chain's credentials
// pass the stand-in's check (config, with Glue's prefix, then a listing),
// and a token set on the client is not sent, nor may it sign in.
func TestSigV4Accepted(t *testing.T) {
	sigv4test.SetEnv(t, testKeyID, testSecret)
	g := newGlue(t)
	c := glueClient(t, g)
	c.Token = "not-sent"
	ctx := context.Background()
	require.NoError(t, c.Configure(ctx, "123456789012"))
	require.Equal(t, "/v1/catalogs/123456789012", c.Base())
	var out struct {
		Namespaces [][]string `json:"namespaces"`
	}
	require.NoError(t, c.Do(ctx, http.MethodGet, c.Base()+"/namespaces", nil, nil, &out))
	require.Equal(t, [][]string{{"sales"}}, out.Namespaces)
	require.Equal(t, 2, g.Accepted())
	for _, s := range g.Signatures() {
		require.True(t, strings.HasPrefix(s, "AWS4-HMAC-SHA256 Credential="+testKeyID+"/"), s)
		require.Contains(t, s, "/eu-west-1/glue/aws4_request")
		require.NotContains(t, s, "not-sent")
	}
	require.ErrorContains(t, c.SignIn(ctx, "", "id:secret", ""), "does not sign in with OAuth2")
}

// TestSigV4WrongSecret: a signature made with another secret is refused
// (403), and the error names the refusal without the secret or the
// signature sent.
func TestSigV4WrongSecret(t *testing.T) {
	const wrong = "not-the-secret-at-all-0123456789abcdefgh"
	sigv4test.SetEnv(t, testKeyID, wrong)
	g := newGlue(t)
	c := glueClient(t, g)
	err := c.Configure(context.Background(), "123456789012")
	require.True(t, IsStatus(err, http.StatusForbidden), "%v", err)
	require.Contains(t, err.Error(), "AccessDeniedException")
	require.Equal(t, 0, g.Accepted())
	sigs := g.Signatures()
	require.Len(t, sigs, 1)
	require.NotContains(t, err.Error(), wrong)
	require.NotContains(t, err.Error(), sigs[0][strings.LastIndex(sigs[0], "Signature=")+len("Signature="):])
}

// tamper replaces a request's body, after it was signed, with another of
// the same length.
type tamper struct{}

func (tamper) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(bytes.ReplaceAll(b, []byte("orders"), []byte("ORDERS"))))
	return http.DefaultTransport.RoundTrip(req)
}

// TestSigV4BodyCovered: the signature covers the body's SHA-256. A POST
// signed as sent passes the check (the stand-in then answers 404: it has
// no such route); the same POST with its body changed after signing is
// refused 403.
func TestSigV4BodyCovered(t *testing.T) {
	sigv4test.SetEnv(t, testKeyID, testSecret)
	g := newGlue(t)
	c := glueClient(t, g)
	ctx := context.Background()
	body := map[string]any{"name": "orders"}
	err := c.Do(ctx, http.MethodPost, "/v1/catalogs/123456789012/namespaces/sales/register", nil, body, nil)
	require.True(t, IsStatus(err, http.StatusNotFound), "%v", err)
	require.Equal(t, 1, g.Accepted())

	c.HTTP = &http.Client{Transport: tamper{}, CheckRedirect: sameOrigin}
	err = c.Do(ctx, http.MethodPost, "/v1/catalogs/123456789012/namespaces/sales/register", nil, body, nil)
	require.True(t, IsStatus(err, http.StatusForbidden), "%v", err)
	require.Equal(t, 1, g.Accepted())
}

// TestSigV4RedirectToAnotherServerRefused: a signed request is not
// carried to another server by a redirect.
func TestSigV4RedirectToAnotherServerRefused(t *testing.T) {
	sigv4test.SetEnv(t, testKeyID, testSecret)
	var leaked string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("Authorization") + r.Header.Get("X-Amz-Date")
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/config", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	sig, err := LoadSigV4(context.Background(), "eu-west-1", "glue")
	require.NoError(t, err)
	c := New(first.URL, nil)
	c.SigV4 = sig
	require.ErrorContains(t, c.Configure(context.Background(), ""), "refused a redirect to another server")
	require.Empty(t, leaked)
}

// TestLoadSigV4NeedsRegionAndCredentials: no region anywhere, or no
// credentials in the chain, fail before any request.
func TestLoadSigV4NeedsRegionAndCredentials(t *testing.T) {
	sigv4test.SetEnv(t, testKeyID, testSecret)
	_, err := LoadSigV4(context.Background(), "", "")
	require.ErrorContains(t, err, "no AWS region")
	t.Setenv("AWS_REGION", "us-east-2")
	sig, err := LoadSigV4(context.Background(), "", "")
	require.NoError(t, err)
	require.Equal(t, "us-east-2", sig.Region)

	sigv4test.SetEnv(t, "", "")
	_, err = LoadSigV4(context.Background(), "eu-west-1", "")
	require.ErrorContains(t, err, "no AWS credentials")
}
