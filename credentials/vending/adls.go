package vending

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/credentials"
)

// ADLS vends SAS tokens scoped to one table's directory on Azure: a
// service SAS signed with the account key, or a user-delegation SAS signed
// with a key the profile's service principal obtains from the storage
// account. SAS tokens are cached for at most half their lifetime, as are
// delegation keys (for half of theirs); concurrent requests share a mint.
type ADLS struct {
	sealer *credentials.Sealer
	base   http.RoundTripper
	now    func() time.Time
	tracer trace.Tracer // nil: no spans (tracing.go)

	cache mintCache[mintedSAS]
	keys  mintCache[delegationKey]
}

type mintedSAS struct {
	token   string
	expires time.Time
}

type delegationKey struct {
	cred    *service.UserDelegationCredential
	expires time.Time
}

var _ credentials.Vendor = (*ADLS)(nil)

// NewADLS returns an Azure vendor; base is the HTTP transport for Entra ID
// and the storage account (nil: default).
func NewADLS(sealer *credentials.Sealer, base http.RoundTripper) *ADLS {
	if base == nil {
		base = http.DefaultTransport
	}
	return &ADLS{sealer: sealer, base: base, now: time.Now}
}

// Vend implements credentials.Vendor for warehouses with an "adls"
// profile: nothing for others; an error for a location outside the
// profile's filesystem, or when the secret cannot be opened or Azure
// refuses a delegation key.
func (v *ADLS) Vend(ctx context.Context, wh credentials.WarehouseInfo, tableLocation string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	var p credentials.ADLSProfile
	if err := json.Unmarshal([]byte(wh.StorageProfile), &p); err != nil || p.Type != "adls" {
		return nil, nil, nil
	}
	loc, err := p.ParseADLSLocation(tableLocation)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot vend a SAS for %s: %w", tableLocation, err)
	}
	sum := sha256.Sum256([]byte(wh.StorageProfile))
	key := loc.Container + "/" + loc.Dir + "|" + string(level) + "|" + hex.EncodeToString(sum[:8])
	m, err := v.cache.get(key, v.now, func() (mintedSAS, time.Time, error) {
		values := sas.BlobSignatureValues{
			Protocol:      sasProtocol(&p),
			Permissions:   credentials.SASPermissions(level),
			ContainerName: loc.Container,
			Directory:     loc.Dir,
		}
		return v.sign(ctx, &p, values, string(level))
	})
	if err != nil {
		return nil, nil, err
	}
	cfg := credentials.ADLSConfig(&p, m.token, m.expires)
	cred := map[string]string{}
	for k, val := range cfg {
		cred[k] = val
	}
	return cfg, []credentials.StorageCredential{{Prefix: tableLocation, Config: cred}}, nil
}

// CatalogSAS returns a SAS on the profile's whole filesystem for the
// catalog's own metadata reads and writes, for profiles that hold no
// account key (a service principal, which iceberg-go's FileIO cannot use
// itself); "" for a shared-key profile. It is never vended.
func (v *ADLS) CatalogSAS(ctx context.Context, p *credentials.ADLSProfile) (string, error) {
	if p.SharedKey() {
		return "", nil
	}
	m, err := v.cache.get("catalog|"+profileKey(p), v.now, func() (mintedSAS, time.Time, error) {
		values := sas.BlobSignatureValues{
			Protocol:      sasProtocol(p),
			Permissions:   (&sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, Delete: true, List: true}).String(),
			ContainerName: p.Filesystem,
		}
		return v.sign(ctx, p, values, "catalog")
	})
	return m.token, err
}

// sign signs values with the profile's secret, expiring after the
// profile's lifetime (or the delegation key's end, if sooner); it returns
// the token and when to mint a new one.
func (v *ADLS) sign(ctx context.Context, p *credentials.ADLSProfile, values sas.BlobSignatureValues, access string) (mintedSAS, time.Time, error) {
	now := v.now()
	values.ExpiryTime = now.Add(p.Lifetime()).UTC()
	var q sas.QueryParameters
	if p.SharedKey() {
		secret, err := v.sealer.Open(p.SealedAccountKey)
		if err != nil {
			return mintedSAS{}, time.Time{}, err
		}
		cred, err := azblob.NewSharedKeyCredential(p.AccountName, secret)
		if err != nil {
			return mintedSAS{}, time.Time{}, fmt.Errorf("account key: %w", err)
		}
		if q, err = values.SignWithSharedKey(cred); err != nil {
			return mintedSAS{}, time.Time{}, fmt.Errorf("sign SAS: %w", err)
		}
	} else {
		dk, err := v.delegationKey(ctx, p, access)
		if err != nil {
			return mintedSAS{}, time.Time{}, err
		}
		values.ExpiryTime = minTime(values.ExpiryTime, dk.expires)
		if q, err = values.SignWithUserDelegation(dk.cred); err != nil {
			return mintedSAS{}, time.Time{}, fmt.Errorf("sign SAS: %w", err)
		}
	}
	return mintedSAS{token: q.Encode(), expires: values.ExpiryTime}, now.Add(values.ExpiryTime.Sub(now) / 2), nil
}

// delegationKey returns a user-delegation key of the profile's service
// principal, valid for twice the SAS lifetime (at most the 7 days Azure
// allows) and renewed at half of that.
func (v *ADLS) delegationKey(ctx context.Context, p *credentials.ADLSProfile, access string) (delegationKey, error) {
	return v.keys.get(profileKey(p), v.now, func() (delegationKey, time.Time, error) {
		secret, err := v.sealer.Open(p.SealedClientSecret)
		if err != nil {
			return delegationKey{}, time.Time{}, err
		}
		opts := policy.ClientOptions{Transport: &http.Client{Transport: v.base, Timeout: 30 * time.Second}}
		copts := &azidentity.ClientSecretCredentialOptions{ClientOptions: azcore.ClientOptions(opts)}
		if p.AuthorityHost != "" {
			// A sovereign or private authority has no public instance
			// metadata to discover.
			copts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: p.AuthorityHost}
			copts.DisableInstanceDiscovery = true
		}
		tok, err := azidentity.NewClientSecretCredential(p.TenantID, p.ClientID, secret, copts)
		if err != nil {
			return delegationKey{}, time.Time{}, fmt.Errorf("service principal: %w", err)
		}
		// The SDK names the account of a delegation key after the service
		// URL's first host label, so the client addresses the account by
		// its cloud name and an endpoint override is applied beneath it.
		sopts := azcore.ClientOptions(opts)
		if p.Endpoint != "" {
			sopts.Transport = &http.Client{Transport: endpointRedirect{p: p, base: v.base}, Timeout: 30 * time.Second}
		}
		client, err := service.NewClient("https://"+p.AccountName+".blob."+p.Suffix(), tok, &service.ClientOptions{ClientOptions: sopts})
		if err != nil {
			return delegationKey{}, time.Time{}, err
		}
		now := v.now().UTC()
		life := min(2*p.Lifetime(), 7*24*time.Hour)
		start, end := now.Add(-5*time.Minute).Format(sas.TimeFormat), now.Add(life).Format(sas.TimeFormat)
		octx, span := startCall(context.WithoutCancel(ctx), v.tracer, "azure.user-delegation-key", cloudAzure, access)
		octx, cancel := context.WithTimeout(octx, time.Minute)
		defer cancel()
		cred, err := client.GetUserDelegationCredential(octx, service.KeyInfo{Start: &start, Expiry: &end}, nil)
		endCall(span, err)
		if err != nil {
			return delegationKey{}, time.Time{}, fmt.Errorf("user delegation key: %w", err)
		}
		return delegationKey{cred: cred, expires: now.Add(life)}, now.Add(life / 2), nil
	})
}

// endpointRedirect sends requests for the account's cloud Blob host to
// the profile's endpoint (with the account leading the path for an
// emulator); other requests (Entra ID) pass unchanged.
type endpointRedirect struct {
	p    *credentials.ADLSProfile
	base http.RoundTripper
}

func (r endpointRedirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != r.p.AccountName+".blob."+r.p.Suffix() {
		return r.base.RoundTrip(req)
	}
	scheme, host, err := r.p.BlobService()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = scheme, host, host
	if r.p.Emulator() {
		req.URL.Path = "/" + r.p.AccountName + req.URL.Path
		req.URL.RawPath = ""
	}
	return r.base.RoundTrip(req)
}

// profileKey names a profile (sealed secret included) in the caches, so
// that a changed profile never reuses what the old one minted.
func profileKey(p *credentials.ADLSProfile) string {
	raw, _ := json.Marshal(p)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// sasProtocol is https only, except for a plain-http emulator endpoint.
func sasProtocol(p *credentials.ADLSProfile) sas.Protocol {
	if scheme, _, _ := p.BlobService(); scheme == "http" {
		return sas.ProtocolHTTPSandHTTP
	}
	return sas.ProtocolHTTPS
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
