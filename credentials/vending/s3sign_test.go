package vending_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
)

// TestSignBindsCheckedRequest: the signature answered covers the request
// as the policy re-serialized it (canonical URI, one value per header,
// the copy source re-encoded, the body's own hash), which is what the
// engine is told to send: signing that request again gives the same
// Authorization.
func TestSignBindsCheckedRequest(t *testing.T) {
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	p, err := credentials.ParseS3Profile([]byte(`{"type":"s3","region":"us-east-1","endpoint":"http://s3.local:8333",
		"path-style-access":true,"remote-signing-enabled":true,"access-key-id":"AK","secret-access-key":"SK"}`), sealer)
	require.NoError(t, err)
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	wh := credentials.WarehouseInfo{Name: "wh", StorageProfile: string(raw)}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	del := `<Delete><Object><Key>wh/ns/t/data/a</Key></Object></Delete>`
	for _, c := range []struct {
		r   credentials.S3SignRequest
		uri string
	}{
		{credentials.S3SignRequest{Region: "us-east-1", Method: "put", URI: "http://S3.local:8333/warehouse/wh/ns/t/data/c!?x-id=CopyObject",
			Headers: map[string][]string{"X-Amz-Copy-Source": {"warehouse/wh/ns/t/data/a b"}, "Content-Type": {" application/octet-stream "},
				"Authorization": {"x"}, "Host": {"elsewhere"}}},
			"http://s3.local:8333/warehouse/wh/ns/t/data/c%21?x-id=CopyObject"},
		{credentials.S3SignRequest{Region: "us-east-1", Method: "GET", URI: "http://s3.local:8333/warehouse?list-type=2&prefix=wh/ns/t/"},
			"http://s3.local:8333/warehouse?list-type=2&prefix=wh%2Fns%2Ft%2F"},
		{credentials.S3SignRequest{Region: "us-east-1", Method: "POST", URI: "http://s3.local:8333/warehouse?delete", Body: &del,
			Headers: map[string][]string{"x-amz-content-sha256": {"UNSIGNED-PAYLOAD"}}},
			"http://s3.local:8333/warehouse?delete"},
	} {
		out, err := vending.New(sealer).Sign(context.Background(), wh, "s3://warehouse/wh/ns/t", false, credentials.AccessReadWrite, c.r, now)
		require.NoError(t, err, "%s", c.r.URI)
		require.Equal(t, c.uri, out.URI)
		req, err := http.NewRequest(out.Op.Method, out.URI, nil)
		require.NoError(t, err)
		for k, vs := range out.Headers {
			require.Len(t, vs, 1, "header %s", k)
			switch http.CanonicalHeaderKey(k) {
			case "Authorization", "X-Amz-Date", "Host", "Content-Length":
			default:
				req.Header.Set(k, vs[0])
			}
		}
		if c.r.Body != nil {
			sum := sha256.Sum256([]byte(*c.r.Body))
			require.Equal(t, hex.EncodeToString(sum[:]), req.Header.Get("X-Amz-Content-Sha256"), "the hash of the body checked")
		}
		if c.r.Headers["X-Amz-Copy-Source"] != nil {
			require.Equal(t, "warehouse/wh/ns/t/data/a%20b", req.Header.Get("X-Amz-Copy-Source"))
			require.Equal(t, "application/octet-stream", req.Header.Get("Content-Type"))
		}
		signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		require.NoError(t, signer.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AK", SecretAccessKey: "SK"}, req,
			req.Header.Get("X-Amz-Content-Sha256"), "s3", "us-east-1", now))
		require.Equal(t, out.Headers["Authorization"][0], req.Header.Get("Authorization"), "%s", c.r.URI)
	}
}
