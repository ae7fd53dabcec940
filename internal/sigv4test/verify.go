// Package sigv4test gives tests a stand-in for AWS Glue's Iceberg REST
// endpoint, which cannot run offline: an HTTP server that checks every
// request's AWS Signature Version 4 against a known access key and secret
// (recomputing it with the AWS SDK's own signer over the request as
// received, its body's SHA-256 included) and answers 403 to any request
// whose signature does not match, before serving a tiny Iceberg REST
// catalog. It is for tests only.
package sigv4test

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Verify recomputes the SigV4 signature of r, received with body, for
// creds, region and signing name, and reports whether r's Authorization
// header carries exactly that. It fails when the header is missing or
// malformed, names another access key, region or service, X-Amz-Date is
// missing or more than 15 minutes off, or the signature differs (a wrong
// secret, or a method, path, query, signed header or body changed after
// signing).
func Verify(r *http.Request, body []byte, creds aws.Credentials, region, name string) error {
	got := r.Header.Get("Authorization")
	signed, err := signedHeaders(got)
	if err != nil {
		return err
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return errors.New("no valid X-Amz-Date")
	}
	if d := time.Since(at); d > 15*time.Minute || d < -15*time.Minute {
		return errors.New("X-Amz-Date is too far from now")
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return err
	}
	again.ContentLength = r.ContentLength
	for _, h := range signed {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), name, region, at); err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(again.Header.Get("Authorization")), []byte(got)) != 1 {
		return errors.New("the signature does not match")
	}
	return nil
}

// signedHeaders is the SignedHeaders list of a SigV4 Authorization
// header, lower-cased. It fails when the header is not SigV4.
func signedHeaders(auth string) ([]string, error) {
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return nil, errors.New("no SigV4 Authorization header")
	}
	for _, part := range strings.Split(rest, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "SignedHeaders="); ok {
			return strings.Split(v, ";"), nil
		}
	}
	return nil, errors.New("no SignedHeaders in the Authorization header")
}
