package vending

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/google/downscope"

	"github.com/lakehold/catalog/credentials"
)

// GCS vends OAuth tokens downscoped to one table: a root token of the
// profile's service account is exchanged at Google STS with a credential
// access boundary on the table prefix. Tokens are cached for at most half
// their remaining lifetime; concurrent requests share one exchange.
type GCS struct {
	sealer *credentials.Sealer
	base   http.RoundTripper
	now    func() time.Time
	tracer trace.Tracer // nil: no spans (tracing.go)

	cache mintCache[*oauth2.Token]
}

// NewGCS returns a GCS vendor; base is the HTTP transport (nil: default).
func NewGCS(sealer *credentials.Sealer, base http.RoundTripper) *GCS {
	if base == nil {
		base = http.DefaultTransport
	}
	return &GCS{sealer: sealer, base: base, now: time.Now}
}

// stsRedirect sends requests for Google STS to another endpoint (emulators
// and tests); other requests pass unchanged.
type stsRedirect struct {
	to   *url.URL
	base http.RoundTripper
}

func (r stsRedirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.to != nil && req.URL.Host == "sts.googleapis.com" {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
		req.Host = r.to.Host
	}
	return r.base.RoundTrip(req)
}

// Vend implements credentials.Vendor for warehouses with a "gcs"
// profile: nothing for others; an error for a non-gs:// location or when
// the exchange fails.
func (v *GCS) Vend(ctx context.Context, wh credentials.WarehouseInfo, tableLocation string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	var p credentials.GCSProfile
	if err := json.Unmarshal([]byte(wh.StorageProfile), &p); err != nil || p.Type != "gcs" {
		return nil, nil, nil
	}
	loc, err := credentials.ParseLocation(tableLocation)
	if err != nil || loc.Scheme != "gs" {
		return nil, nil, fmt.Errorf("cannot vend GCS tokens for %s: not a gs:// location", tableLocation)
	}
	access := credentials.Read
	if level == credentials.AccessReadWrite {
		access = credentials.ReadWrite
	}
	sum := sha256.Sum256([]byte(wh.StorageProfile))
	key := tableLocation + "|" + string(access) + "|" + hex.EncodeToString(sum[:8])
	tok, err := v.token(ctx, key, &p, loc, access)
	if err != nil {
		return nil, nil, err
	}
	cfg := map[string]string{
		"gcs.oauth2.token":            tok.AccessToken,
		"gcs.oauth2.token-expires-at": strconv.FormatInt(tok.Expiry.UnixMilli(), 10),
	}
	if p.ProjectID != "" {
		cfg["gcs.project-id"] = p.ProjectID
	}
	if p.Endpoint != "" {
		cfg["gcs.service.host"] = p.Endpoint
	}
	cred := map[string]string{}
	for k, val := range cfg {
		cred[k] = val
	}
	return cfg, []credentials.StorageCredential{{Prefix: tableLocation, Config: cred}}, nil
}

func (v *GCS) token(ctx context.Context, key string, p *credentials.GCSProfile, loc credentials.Location, access credentials.Access) (*oauth2.Token, error) {
	return v.cache.get(key, v.now, func() (*oauth2.Token, time.Time, error) {
		keyJSON, err := v.sealer.Open(p.SealedKey)
		if err != nil {
			return nil, time.Time{}, err
		}
		var to *url.URL
		if p.STSEndpoint != "" {
			if to, err = url.Parse(p.STSEndpoint); err != nil {
				return nil, time.Time{}, fmt.Errorf("sts-endpoint: %w", err)
			}
		}
		hc := &http.Client{Transport: stsRedirect{to: to, base: v.base}, Timeout: 30 * time.Second}
		octx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, hc)
		// The key is user-supplied: accept a service-account key only, never
		// an external-account configuration that would make us fetch from
		// or run whatever it names.
		root, err := google.CredentialsFromJSONWithType(octx, []byte(keyJSON), google.ServiceAccount, "https://www.googleapis.com/auth/cloud-platform")
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("service-account key: %w", err)
		}
		rules, err := credentials.GCSAccessBoundary(loc, access)
		if err != nil {
			return nil, time.Time{}, err
		}
		ts, err := downscope.NewTokenSource(octx, downscope.DownscopingConfig{RootSource: root.TokenSource, Rules: rules})
		if err != nil {
			return nil, time.Time{}, err
		}
		_, span := startCall(ctx, v.tracer, "gcs.downscope", cloudGCP, string(access))
		tok, err := ts.Token() // the exchange runs on octx, which outlives a cancelled request
		endCall(span, err)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("downscope token: %w", err)
		}
		now := v.now()
		return tok, now.Add(tok.Expiry.Sub(now) / 2), nil
	})
}

// Multi dispatches to the vendor of a warehouse's profile type.
type Multi struct {
	S3   *S3
	GCS  *GCS
	ADLS *ADLS
}

var _ credentials.Vendor = Multi{}

// New returns the vendors for every supported profile type.
func New(sealer *credentials.Sealer, opts ...Option) Multi {
	m := Multi{S3: NewS3(sealer), GCS: NewGCS(sealer, nil), ADLS: NewADLS(sealer, nil)}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// Vend implements credentials.Vendor.
func (m Multi) Vend(ctx context.Context, wh credentials.WarehouseInfo, tableLocation string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	var head struct {
		Type string `json:"type"`
	}
	if wh.StorageProfile == "" || json.Unmarshal([]byte(wh.StorageProfile), &head) != nil {
		return nil, nil, nil
	}
	switch head.Type {
	case "s3":
		return m.S3.Vend(ctx, wh, tableLocation, level)
	case "gcs":
		return m.GCS.Vend(ctx, wh, tableLocation, level)
	case "adls":
		if m.ADLS == nil {
			return nil, nil, errors.New("no Azure vendor is configured")
		}
		return m.ADLS.Vend(ctx, wh, tableLocation, level)
	}
	return nil, nil, nil
}

// CatalogSAS returns the catalog's own SAS for an Azure profile without an
// account key; see ADLS.CatalogSAS.
func (m Multi) CatalogSAS(ctx context.Context, p *credentials.ADLSProfile) (string, error) {
	if m.ADLS == nil {
		return "", errors.New("no Azure vendor is configured")
	}
	return m.ADLS.CatalogSAS(ctx, p)
}
