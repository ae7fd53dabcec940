// Package vending mints storage credentials scoped to one table: S3
// credentials through STS AssumeRole with an inline session policy, GCS
// tokens downscoped at Google STS, and Azure SAS tokens on the table's
// directory; and it signs S3 requests for remote signing. It implements
// credentials.Vendor and credentials.Signer; the policies themselves come
// from package credentials.
package vending

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/credentials"
)

// Minted is one set of temporary credentials.
type Minted struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Expires                                    time.Time
}

// MintFunc calls STS. The default uses aws-sdk-go-v2; tests of the cache
// may substitute one.
type MintFunc func(ctx context.Context, p *credentials.S3Profile, secret, policy, session string, d time.Duration) (Minted, error)

// S3 vends S3 credentials. Credentials are cached per (table location,
// access level, profile) for at most half their lifetime; concurrent
// requests for the same key share one STS call.
type S3 struct {
	sealer *credentials.Sealer
	mint   MintFunc
	now    func() time.Time
	tracer trace.Tracer // nil: no spans (tracing.go)

	cache mintCache[Minted]
}

var _ credentials.Vendor = (*S3)(nil)

// NewS3 returns a vendor that opens profile secrets with sealer.
func NewS3(sealer *credentials.Sealer) *S3 {
	return &S3{sealer: sealer, mint: assumeRole, now: time.Now}
}

// WithMint replaces the STS call (for tests) and returns v.
func (v *S3) WithMint(m MintFunc, now func() time.Time) *S3 {
	v.mint, v.now = m, now
	return v
}

// Vend implements credentials.Vendor: nothing when the warehouse has
// no S3 profile; an error when the table is not on S3 or STS refuses.
func (v *S3) Vend(ctx context.Context, wh credentials.WarehouseInfo, tableLocation string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	if wh.StorageProfile == "" {
		return nil, nil, nil
	}
	var p credentials.S3Profile
	if err := json.Unmarshal([]byte(wh.StorageProfile), &p); err != nil {
		return nil, nil, fmt.Errorf("storage profile of %s: %w", wh.Name, err)
	}
	if p.Type != "s3" || !p.CanVend() {
		return nil, nil, nil // a signing-only profile vends nothing
	}
	loc, err := credentials.ParseLocation(tableLocation)
	if err != nil || loc.Scheme != "s3" {
		return nil, nil, fmt.Errorf("cannot vend S3 credentials for %s: not an s3:// location", tableLocation)
	}
	access := credentials.Read
	if level == credentials.AccessReadWrite {
		access = credentials.ReadWrite
	}
	sum := sha256.Sum256([]byte(wh.StorageProfile))
	key := tableLocation + "|" + string(access) + "|" + hex.EncodeToString(sum[:8])
	m, err := v.get(ctx, key, &p, loc, access)
	if err != nil {
		return nil, nil, err
	}
	cfg := map[string]string{
		"client.region": p.Region, "s3.access-key-id": m.AccessKeyID,
		"s3.secret-access-key": m.SecretAccessKey, "s3.session-token": m.SessionToken,
	}
	if p.Endpoint != "" {
		cfg["s3.endpoint"] = p.Endpoint
		cfg["s3.path-style-access"] = strconv.FormatBool(p.PathStyleAccess)
	}
	if p.SSEType != "" {
		cfg["s3.sse.type"] = p.SSEType
		if p.SSEKey != "" {
			cfg["s3.sse.key"] = p.SSEKey
		}
	}
	cred := map[string]string{"s3.session-token-expires-at-ms": strconv.FormatInt(m.Expires.UnixMilli(), 10)}
	for k, val := range cfg {
		cred[k] = val
	}
	return cfg, []credentials.StorageCredential{{Prefix: tableLocation, Config: cred}}, nil
}

func (v *S3) get(ctx context.Context, key string, p *credentials.S3Profile, loc credentials.Location, access credentials.Access) (Minted, error) {
	return v.cache.get(key, v.now, func() (Minted, time.Time, error) {
		secret, err := v.sealer.Open(p.SealedSecret)
		if err != nil {
			return Minted{}, time.Time{}, err
		}
		policy, err := credentials.S3SessionPolicy(loc, access, "")
		if err != nil {
			return Minted{}, time.Time{}, err
		}
		sum := sha256.Sum256([]byte(key))
		session := "catalog-" + hex.EncodeToString(sum[:6])
		life := p.Lifetime()
		start := v.now()
		sctx, span := startCall(ctx, v.tracer, "sts.AssumeRole", cloudAWS, string(access))
		m, err := v.mint(sctx, p, secret, policy, session, life)
		endCall(span, err)
		if err != nil {
			return Minted{}, time.Time{}, err
		}
		return m, start.Add(life / 2), nil
	})
}

// ValidUntil reports until when cached credentials for a location stay
// the same, so that a load response can be revalidated (ETag) only then.
func (v *S3) ValidUntil(key string) (time.Time, bool) {
	return v.cache.refreshAt(key)
}

func assumeRole(ctx context.Context, p *credentials.S3Profile, secret, policy, session string, d time.Duration) (Minted, error) {
	opts := sts.Options{
		Region:      p.Region,
		Credentials: awscreds.NewStaticCredentialsProvider(p.AccessKeyID, secret, ""),
	}
	if p.STSEndpoint != "" {
		opts.BaseEndpoint = aws.String(p.STSEndpoint)
	}
	in := &sts.AssumeRoleInput{
		RoleArn: aws.String(p.RoleARN), RoleSessionName: aws.String(session),
		Policy: aws.String(policy), DurationSeconds: aws.Int32(int32(d / time.Second)),
	}
	if p.ExternalID != "" {
		in.ExternalId = aws.String(p.ExternalID)
	}
	out, err := sts.New(opts).AssumeRole(ctx, in)
	if err != nil {
		return Minted{}, fmt.Errorf("sts AssumeRole: %w", err)
	}
	c := out.Credentials
	if c == nil || c.AccessKeyId == nil || c.SecretAccessKey == nil || c.SessionToken == nil || c.Expiration == nil {
		return Minted{}, errors.New("sts AssumeRole returned no credentials")
	}
	return Minted{AccessKeyID: *c.AccessKeyId, SecretAccessKey: *c.SecretAccessKey, SessionToken: *c.SessionToken, Expires: *c.Expiration}, nil
}
