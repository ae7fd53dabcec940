package restclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// DefaultSigningName is the SigV4 signing name of AWS Glue's Iceberg REST
// endpoint (https://glue.REGION.amazonaws.com/iceberg).
const DefaultSigningName = "glue"

// SigV4 signs every request of a client with AWS Signature Version 4
// instead of sending a bearer token: the way AWS Glue's Iceberg REST
// endpoint authenticates.
type SigV4 struct {
	// Region and Name are the signing region and signing name ("glue").
	Region, Name string
	// Credentials gives the access key, secret and session token; they
	// are asked for at each request, so expiring ones are refreshed.
	Credentials aws.CredentialsProvider
}

// LoadSigV4 is a signer with credentials from the AWS default chain
// (environment, shared config and credentials files, SSO, web identity,
// container or instance role), for region ("": the chain's region, as
// AWS_REGION or the profile set it) and signing name ("": glue). It
// fails when the AWS configuration cannot be loaded, no region is given
// or configured, or the chain yields no credentials.
func LoadSigV4(ctx context.Context, region, name string) (*SigV4, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if region == "" {
		region = cfg.Region
	}
	if region == "" {
		return nil, errors.New("no AWS region: give one (or set AWS_REGION)")
	}
	if name == "" {
		name = DefaultSigningName
	}
	// Fail here, before any request, when the chain finds nothing.
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("no AWS credentials from the default chain: %w", err)
	}
	return &SigV4{Region: region, Name: name, Credentials: cfg.Credentials}, nil
}

// sign adds X-Amz-Date, the session token when there is one, and the
// Authorization header over the method, path, query, headers and the
// SHA-256 of the body. It fails when the credentials cannot be had or
// the body cannot be read again.
func (s *SigV4) sign(ctx context.Context, req *http.Request) error {
	hash, err := payloadHash(req)
	if err != nil {
		return err
	}
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	req.Header.Del("Authorization")
	return v4.NewSigner().SignHTTP(ctx, creds, req, hash, s.Name, s.Region, time.Now().UTC())
}

// payloadHash is the hex SHA-256 of req's body (of nothing when it has
// none), read from a copy so the body still goes out whole.
func payloadHash(req *http.Request) (string, error) {
	h := sha256.New()
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return "", errors.New("cannot sign a request body that cannot be read twice")
		}
		body, err := req.GetBody()
		if err != nil {
			return "", err
		}
		defer body.Close()
		if _, err := io.Copy(h, body); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
