package server_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/internal/restclient"
	"github.com/lakehold/catalog/internal/sigv4test"
	"github.com/lakehold/catalog/service"
)

// TestImportRouteNoSigV4: the import inside the catalog does not sign
// with SigV4 (it would sign as the server's AWS identity). Against a
// stand-in for AWS Glue that verifies signatures (fake: AWS Glue cannot
// run offline), a route call naming it, even with a source-sigv4 field
// the route does not have, goes unsigned and is answered 422 with the
// stand-in's 403; the service refuses a source with SigV4 set (400)
// before sending anything.
func TestImportRouteNoSigV4(t *testing.T) {
	e := newImportEnv(t, "sqlite")
	creds := aws.Credentials{AccessKeyID: "AKIDSERVER", SecretAccessKey: "server-secret-4b7d"}
	g := sigv4test.NewGlue(t, creds, "eu-west-1", "123456789012", sigv4test.Table{Namespace: "sales", Name: "orders",
		MetadataLocation: "s3://b/sales/orders/metadata/1.metadata.json"})

	r := e.importAs(t, "local", map[string]any{"source-uri": g.URL, "source-warehouse": "123456789012",
		"source-credential": nil, "source-sigv4": true, "dry-run": true})
	require.Equal(t, 422, r.status, "%s", r.body)
	require.Contains(t, string(r.body), "config: the catalog answered 403 AccessDeniedException")
	require.Zero(t, g.Accepted())
	require.Equal(t, []string{""}, g.Signatures(), "one unsigned request")

	sigv4test.SetEnv(t, creds.AccessKeyID, creds.SecretAccessKey)
	sig, err := restclient.LoadSigV4(context.Background(), "eu-west-1", "")
	require.NoError(t, err)
	_, err = e.dst.svc.ImportCatalog(localCtx(), "wh", service.ImportInput{
		Source: catalogimport.Endpoint{URI: g.URL, Warehouse: "123456789012", SigV4: sig}, DryRun: true})
	require.ErrorContains(t, err, "does not sign with SigV4")
	require.Len(t, g.Signatures(), 1, "nothing more sent")
}
