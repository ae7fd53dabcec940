package vending

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/lakehold/catalog/credentials"
)

// unsignedHeaders are sent as the engine gave them but left out of the
// signature: clients change them between signing and sending (a retried
// range, the SDK's retry counters), or the signature itself sets them.
var unsignedHeaders = map[string]bool{
	"range": true, "x-amz-date": true, "amz-sdk-invocation-id": true, "amz-sdk-retry": true,
	"amz-sdk-request": true, "authorization": true, "x-amz-security-token": true, "host": true,
	"content-length": true, "connection": true, "accept-encoding": true, "user-agent": true,
	"expect": true, "transfer-encoding": true,
}

// Signing implements credentials.Signer: the FileIO properties that make
// Java's S3FileIO and PyIceberg sign through the catalog (nil without an S3
// profile), whether the profile enables signing, and whether it can vend.
// endpoint is the table's sign route relative to the catalog URI.
func (m Multi) Signing(wh credentials.WarehouseInfo, endpoint string) (map[string]string, bool, bool) {
	p, ok := s3Profile(wh)
	if !ok {
		return nil, false, false
	}
	cfg := map[string]string{
		"client.region": p.Region, "s3.region": p.Region,
		"s3.remote-signing-enabled": "true",
		// PyIceberg signs only through fsspec, with its own key names;
		// Java 1.11 reads s3.signer.endpoint, 1.12 the spec's route.
		"s3.signer": "S3V4RestSigner", "s3.signer.endpoint": endpoint,
		"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
	}
	if p.Endpoint != "" {
		cfg["s3.endpoint"] = p.Endpoint
		cfg["s3.path-style-access"] = strconv.FormatBool(p.PathStyleAccess)
	}
	return cfg, p.RemoteSigningEnabled, p.CanVend()
}

// Sign implements credentials.Signer: it checks r against the table at
// tableLocation and the caller's level (credentials.CheckS3Op) and signs
// it with the profile's own keys (SigV4, the payload hash the policy
// chose). Errors: a *credentials.SignRefusal for a request it will not
// sign, including a warehouse without remote signing (unless the table
// opts in with tablePrefers); another error when the profile's secret
// cannot be opened.
func (m Multi) Sign(ctx context.Context, wh credentials.WarehouseInfo, tableLocation string, tablePrefers bool, level credentials.AccessLevel, r credentials.S3SignRequest, now time.Time) (credentials.SignedRequest, error) {
	p, ok := s3Profile(wh)
	if !ok || !(p.RemoteSigningEnabled || tablePrefers) {
		return credentials.SignedRequest{}, &credentials.SignRefusal{Forbidden: true, Msg: "Remote signing is not enabled for this table's storage"}
	}
	ep, err := p.SignEndpoint()
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	op, err := credentials.ParseS3Request(r, ep)
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	loc, err := credentials.ParseLocation(tableLocation)
	if err != nil {
		return credentials.SignedRequest{}, &credentials.SignRefusal{Forbidden: true, Msg: "The table is not on S3"}
	}
	if err := credentials.CheckS3Op(op, loc, level); err != nil {
		return credentials.SignedRequest{}, err
	}
	secret, err := m.S3.sealer.Open(p.SealedSecret)
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	out, err := signV4(ctx, aws.Credentials{AccessKeyID: p.AccessKeyID, SecretAccessKey: secret}, r.Region, op, now)
	if err != nil {
		return credentials.SignedRequest{}, err
	}
	out.Op = op
	return out, nil
}

// signV4 signs the request as op re-serialized it (its method, URI and
// single-valued headers, never the engine's raw ones), as S3 expects (no
// second escaping of the path), and returns the headers the engine must
// send: those, with the signature's.
func signV4(ctx context.Context, creds aws.Credentials, region string, op credentials.S3Op, now time.Time) (credentials.SignedRequest, error) {
	u, err := url.Parse(op.URI)
	if err != nil {
		return credentials.SignedRequest{}, fmt.Errorf("sign: %w", err)
	}
	req := &http.Request{Method: op.Method, URL: u, Host: u.Host, Header: http.Header{}}
	headers := map[string][]string{}
	for k, v := range op.Headers {
		lower := strings.ToLower(k)
		if !unsignedHeaders[lower] && lower != "x-amz-content-sha256" {
			req.Header[http.CanonicalHeaderKey(k)] = []string{v}
		}
		switch lower {
		case "authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "host":
		default:
			headers[k] = []string{v}
		}
	}
	req.Header.Set("X-Amz-Content-Sha256", op.PayloadHash)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(ctx, creds, req, op.PayloadHash, "s3", region, now.UTC()); err != nil {
		return credentials.SignedRequest{}, fmt.Errorf("sign: %w", err)
	}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Content-Sha256"} {
		headers[k] = []string{req.Header.Get(k)}
	}
	headers["Host"] = []string{u.Host}
	return credentials.SignedRequest{URI: op.URI, Headers: headers, Cacheable: op.Method == "GET" || op.Method == "HEAD"}, nil
}

// s3Profile returns wh's S3 profile, if it has one.
func s3Profile(wh credentials.WarehouseInfo) (*credentials.S3Profile, bool) {
	if wh.StorageProfile == "" {
		return nil, false
	}
	var p credentials.S3Profile
	if json.Unmarshal([]byte(wh.StorageProfile), &p) != nil || p.Type != "s3" {
		return nil, false
	}
	return &p, true
}
