package catalogimport

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/restclient"
	"github.com/lakehold/catalog/internal/sigv4test"
)

// TestSigV4Source reads a stand-in for AWS Glue's Iceberg REST endpoint
// (fake: AWS Glue cannot run offline) that verifies SigV4 signatures:
// signed with the default chain's credentials, the source is walked
// through Glue's catalogs/ACCOUNT prefix and its table registered; an
// OAuth2 credential or token beside SigV4 is refused before any request,
// and a wrong secret is refused by the source (403) at the config step.
func TestSigV4Source(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDIMPORT", SecretAccessKey: "import-secret-1234"}
	g := sigv4test.NewGlue(t, creds, "us-west-2", "210987654321",
		sigv4test.Table{Namespace: "web", Name: "clicks", MetadataLocation: "s3://b/web/clicks/metadata/1.metadata.json"})
	ctx := context.Background()

	sigv4test.SetEnv(t, creds.AccessKeyID, creds.SecretAccessKey)
	sig, err := restclient.LoadSigV4(ctx, "us-west-2", "")
	require.NoError(t, err)
	for _, e := range []Endpoint{{Token: "t"}, {Credential: "a:b"}} {
		e.URI, e.Warehouse, e.SigV4 = g.URL, "210987654321", sig
		_, err := OpenSource(ctx, e)
		require.ErrorContains(t, err, "SigV4 signing takes no OAuth2 credential or token")
	}
	require.Empty(t, g.Signatures())

	src, err := OpenSource(ctx, Endpoint{URI: g.URL, Warehouse: "210987654321", SigV4: sig})
	require.NoError(t, err)
	dst := &fakeTarget{}
	rep, err := Run(ctx, src, dst, Options{})
	require.NoError(t, err)
	require.Empty(t, rep.Refused())
	require.Equal(t, [][]string{{"web"}}, dst.created)
	require.Equal(t, []string{"web.clicks"}, dst.registered)
	require.Equal(t, len(g.Signatures()), g.Accepted())

	sigv4test.SetEnv(t, creds.AccessKeyID, "another-secret-5678")
	bad, err := restclient.LoadSigV4(ctx, "us-west-2", "")
	require.NoError(t, err)
	_, err = OpenSource(ctx, Endpoint{URI: g.URL, Warehouse: "210987654321", SigV4: bad, Terse: true})
	require.True(t, restclient.IsStatus(err, http.StatusForbidden), "%v", err)
	require.EqualError(t, err, "config: the catalog answered 403 AccessDeniedException")
}
