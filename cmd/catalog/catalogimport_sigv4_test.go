package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/internal/sigv4test"
)

// TestImportFromGlueSigV4 imports from a stand-in for AWS Glue's Iceberg
// REST endpoint (fake: AWS Glue cannot run offline) that checks every
// request's SigV4 signature against a known access key and secret and
// refuses 403 otherwise, serving one table whose metadata file a source
// Lakehold wrote. The CLI signs with credentials from the AWS default
// chain (here AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY). With the
// right secret the table is imported; with a wrong one the import fails
// naming the refusal; neither run prints the secret or a signature.
func TestImportFromGlueSigV4(t *testing.T) {
	const keyID, secret, wrong = "AKIDGLUETEST", "glue-secret-8f3a1c77e0b94d2f", "wrong-secret-0d9e6b5a4c3f2e1d"
	srcLH := newImportLakehold(t, false, "old", "")
	restCall(t, srcLH.url, "old", http.MethodPost, "/namespaces", map[string]any{"namespace": []string{"sales"}})
	var created struct {
		MetadataLocation string          `json:"metadata-location"`
		Metadata         json.RawMessage `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(restCall(t, srcLH.url, "old", http.MethodPost, "/namespaces/sales/tables",
		map[string]any{"name": "orders", "schema": schemaJSON}), &created))
	g := sigv4test.NewGlue(t, aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, "eu-west-1", "123456789012",
		sigv4test.Table{Namespace: "sales", Name: "orders", MetadataLocation: created.MetadataLocation, Metadata: created.Metadata})
	dst := newImportLakehold(t, false, "lake", "file://"+srcLH.dir)
	args := []string{"import", "--json", "--source-uri", g.URL, "--source-warehouse", "123456789012",
		"--source-sigv4", "--source-region", "eu-west-1", "--uri", dst.url, "--warehouse", "lake"}

	sigv4test.SetEnv(t, keyID, wrong)
	var out, errb bytes.Buffer
	err := run(args, &out, &errb)
	require.Error(t, err)
	require.Equal(t, 1, exitCode(err))
	require.Contains(t, err.Error(), "403 AccessDeniedException")
	require.Zero(t, g.Accepted())
	noSecrets(t, g, out.String()+errb.String()+err.Error(), secret, wrong)
	require.False(t, targetHas(t, dst, []string{"sales"}, "orders", false))

	sigv4test.SetEnv(t, keyID, secret)
	out.Reset()
	errb.Reset()
	require.NoError(t, run(args, &out, &errb), "stderr: %s", errb.String())
	var rep catalogimport.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Equal(t, map[string]catalogimport.Status{"namespace sales": catalogimport.Imported, "table sales.orders": catalogimport.Imported}, statuses(&rep))
	require.Equal(t, created.MetadataLocation, loadTableMeta(t, dst.url, "lake", table.Identifier{"sales", "orders"}).MetadataLocation())
	require.Positive(t, g.Accepted())
	noSecrets(t, g, out.String()+errb.String(), secret, wrong)
}

// noSecrets fails when text holds either secret or any signature the
// stand-in received.
func noSecrets(t *testing.T, g *sigv4test.Glue, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		require.NotContains(t, text, s)
	}
	for _, auth := range g.Signatures() {
		_, sig, ok := strings.Cut(auth, "Signature=")
		require.True(t, ok, auth)
		require.NotContains(t, text, sig)
	}
}

// TestImportSigV4Usage: SigV4 with an OAuth2 credential or token, or a
// region or signing name without SigV4, is a usage error (exit status 2).
func TestImportSigV4Usage(t *testing.T) {
	for args, want := range map[string]string{
		"import --source-uri http://x --source-sigv4 --source-token t":        "--source-sigv4 takes no",
		"import --source-uri http://x --source-sigv4 --source-credential a:b": "--source-sigv4 takes no",
		"import --source-uri http://x --source-region eu-west-1":              "go with --source-sigv4",
		"import --source-uri http://x --source-signing-name execute-api":      "go with --source-sigv4",
	} {
		err := run(strings.Fields(args), &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err, args)
		require.Equal(t, 2, exitCode(err), args)
		require.Contains(t, err.Error(), want, args)
	}
}
