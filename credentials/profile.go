package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// S3Profile says how to mint S3 credentials for a warehouse: the catalog's
// own identity calls STS AssumeRole on RoleARN with a session policy scoped
// to the table. The secret is sealed when stored and never returned.
type S3Profile struct {
	Type            string `json:"type"` // "s3"
	Region          string `json:"region"`
	Endpoint        string `json:"endpoint,omitempty"` // S3-compatible stores
	PathStyleAccess bool   `json:"path-style-access,omitempty"`
	STSEndpoint     string `json:"sts-endpoint,omitempty"`
	RoleARN         string `json:"role-arn"`
	ExternalID      string `json:"external-id,omitempty"`
	// RemoteSigningEnabled lets engines have their S3 requests signed by
	// the catalog (POST .../tables/{t}/sign) instead of holding
	// credentials; with it RoleARN may be empty (a store without STS).
	RemoteSigningEnabled bool   `json:"remote-signing-enabled,omitempty"`
	SSEType              string `json:"sse-type,omitempty"` // "", "s3" or "kms"
	SSEKey               string `json:"sse-key,omitempty"`  // KMS key id for kms
	CredentialLifetime   string `json:"credential-lifetime,omitempty"`
	AccessKeyID          string `json:"access-key-id"`
	// SecretAccessKey is accepted on input only; stored as SealedSecret.
	SecretAccessKey string `json:"secret-access-key,omitempty"`
	SealedSecret    string `json:"sealed-secret-access-key,omitempty"`
}

// Lifetime returns the vended credential lifetime (default 1h, at least
// 15 minutes as STS requires).
func (p *S3Profile) Lifetime() time.Duration {
	d, err := time.ParseDuration(p.CredentialLifetime)
	if err != nil || d == 0 {
		d = time.Hour
	}
	return max(d, 15*time.Minute)
}

// ParseS3Profile validates a profile sent by an operator and seals its
// secret. It fails for missing fields or when no server key is set.
func ParseS3Profile(raw []byte, sealer *Sealer) (*S3Profile, error) {
	var p S3Profile
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("storage profile: %w", err)
	}
	switch {
	case p.Type != "s3":
		return nil, errors.New(`storage profile: type must be "s3"`)
	case p.Region == "":
		return nil, errors.New("storage profile: region is required")
	case p.RoleARN == "" && !p.RemoteSigningEnabled:
		return nil, errors.New("storage profile: role-arn is required unless remote-signing-enabled is true")
	case p.AccessKeyID == "" || p.SecretAccessKey == "":
		return nil, errors.New("storage profile: access-key-id and secret-access-key are required")
	case p.SSEType != "" && p.SSEType != "s3" && p.SSEType != "kms":
		return nil, errors.New(`storage profile: sse-type must be "s3" or "kms"`)
	case p.SealedSecret != "":
		return nil, errors.New("storage profile: sealed-secret-access-key cannot be set")
	}
	if p.CredentialLifetime != "" {
		if d, err := time.ParseDuration(p.CredentialLifetime); err != nil || d < 15*time.Minute || d > 12*time.Hour {
			return nil, errors.New("storage profile: credential-lifetime must be a duration from 15m to 12h")
		}
	}
	sealed, err := sealer.Seal(p.SecretAccessKey)
	if err != nil {
		return nil, fmt.Errorf("storage profile: %w", err)
	}
	p.SecretAccessKey, p.SealedSecret = "", sealed
	return &p, nil
}

// CanVend reports whether the profile mints STS credentials (it names a
// role to assume); a signing-only profile does not.
func (p *S3Profile) CanVend() bool { return p.RoleARN != "" }

// SignEndpoint returns which URLs reach the profile's store, for
// ParseS3Request: the endpoint's host (path-style only when the profile
// says so), or AWS's hosts when it has none.
// It fails when the endpoint is not a URL.
func (p *S3Profile) SignEndpoint() (S3Endpoint, error) {
	if p.Endpoint == "" {
		return S3Endpoint{Region: p.Region}, nil
	}
	u, err := url.Parse(p.Endpoint)
	if err != nil || u.Host == "" {
		return S3Endpoint{}, fmt.Errorf("storage profile endpoint %q is not a URL", p.Endpoint)
	}
	return S3Endpoint{Host: u.Host, Region: p.Region, PathStyle: p.PathStyleAccess}, nil
}

// Redacted returns the profile as shown to operators: no secret at all.
func (p S3Profile) Redacted() S3Profile {
	p.SecretAccessKey, p.SealedSecret = "", ""
	return p
}

// GCSProfile says how to mint GCS tokens for a warehouse: the catalog's
// service account gets a root token, exchanged at Google STS for a token
// downscoped by a credential access boundary on the table. The service
// account key is sealed when stored and never returned.
type GCSProfile struct {
	Type      string `json:"type"` // "gcs"
	ProjectID string `json:"project-id,omitempty"`
	// Endpoint is a storage endpoint for emulators (vended as
	// gcs.service.host); STSEndpoint replaces https://sts.googleapis.com
	// (tests and private deployments).
	Endpoint    string `json:"endpoint,omitempty"`
	STSEndpoint string `json:"sts-endpoint,omitempty"`
	// CredentialsJSON is the service-account key, accepted on input only.
	CredentialsJSON json.RawMessage `json:"credentials-json,omitempty"`
	SealedKey       string          `json:"sealed-credentials-json,omitempty"`
}

// Redacted returns the profile without its key.
func (p GCSProfile) Redacted() GCSProfile {
	p.CredentialsJSON, p.SealedKey = nil, ""
	return p
}

// ParseProfile validates a storage profile of any type ("s3", "gcs" or
// "adls") and seals its secret. It returns the profile to store and its
// redacted form for display.
func ParseProfile(raw []byte, sealer *Sealer) (stored any, redacted any, err error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, nil, fmt.Errorf("storage profile: %w", err)
	}
	switch head.Type {
	case "s3":
		p, err := ParseS3Profile(raw, sealer)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Redacted(), nil
	case "gcs":
		var p GCSProfile
		dec := json.NewDecoder(bytesReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, nil, fmt.Errorf("storage profile: %w", err)
		}
		if len(p.CredentialsJSON) == 0 || p.SealedKey != "" {
			return nil, nil, errors.New("storage profile: credentials-json (a service-account key) is required")
		}
		var sa struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(p.CredentialsJSON, &sa) != nil || sa.Type != "service_account" {
			return nil, nil, errors.New("storage profile: credentials-json must be a service-account key")
		}
		sealed, err := sealer.Seal(string(p.CredentialsJSON))
		if err != nil {
			return nil, nil, fmt.Errorf("storage profile: %w", err)
		}
		p.CredentialsJSON, p.SealedKey = nil, sealed
		return &p, p.Redacted(), nil
	case "adls":
		p, err := ParseADLSProfile(raw, sealer)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Redacted(), nil
	}
	return nil, nil, errors.New(`storage profile: type must be "s3", "gcs" or "adls"`)
}
