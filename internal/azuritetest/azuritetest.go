// Package azuritetest gives tests Azurite, Microsoft's Azure Storage
// emulator (scripts/test.sh starts it over HTTPS with OAuth checking,
// naming it in AZURITE_BLOB_ENDPOINT and AZURITE_CA), and a stand-in for
// Entra ID's token endpoint, which cannot run offline.
package azuritetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// Azurite's well-known development account and key.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Endpoint returns Azurite's Blob endpoint and a transport trusting its
// certificate and extra ones. Without AZURITE_BLOB_ENDPOINT the test is
// skipped, or fails when CATALOG_TEST_REQUIRE_AZURITE=1 (make test).
func Endpoint(tb testing.TB, extra ...*x509.Certificate) (string, *http.Transport) {
	tb.Helper()
	ep := os.Getenv("AZURITE_BLOB_ENDPOINT")
	if ep == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_AZURITE") == "1" {
			tb.Fatal("AZURITE_BLOB_ENDPOINT is not set but Azurite is required")
		}
		tb.Skip("needs Azurite: AZURITE_BLOB_ENDPOINT and AZURITE_CA (make test starts it)")
	}
	pemBytes, err := os.ReadFile(os.Getenv("AZURITE_CA"))
	if err != nil {
		tb.Fatalf("AZURITE_CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		tb.Fatal("AZURITE_CA holds no certificate")
	}
	for _, c := range extra {
		pool.AddCert(c)
	}
	return ep, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
}

// TrustForProcess makes every TLS client of the process trust Azurite
// (SSL_CERT_FILE, read once, when the first certificate is verified), for
// code whose HTTP client a test cannot reach, such as iceberg-go's Azure
// FileIO. Call it from TestMain or init, before any TLS.
func TrustForProcess() {
	// The bundle holds the system's roots too (scripts/azurite-start.sh).
	if b := os.Getenv("AZURITE_CA_BUNDLE"); b != "" {
		_ = os.Setenv("SSL_CERT_FILE", b)
	}
}

// Options returns Blob client options on rt, without retries.
func Options(rt http.RoundTripper) *azblob.ClientOptions {
	return &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: rt}, Retry: policy.RetryOptions{MaxRetries: -1}}}
}

// Admin returns a client holding the account key.
func Admin(tb testing.TB, ep string, rt http.RoundTripper) *azblob.Client {
	tb.Helper()
	cred, err := azblob.NewSharedKeyCredential(Account, Key)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(ep+"/"+Account, cred, Options(rt))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// EnsureContainer creates the container with the account key unless it exists.
func EnsureContainer(tb testing.TB, ep string, rt http.RoundTripper, name string) {
	tb.Helper()
	_, err := Admin(tb, ep, rt).CreateContainer(context.Background(), name, nil)
	if err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		tb.Fatal(err)
	}
}

// Entra stands in for Entra ID's OpenID metadata and token endpoints. It
// issues tokens Azurite's OAuth check accepts (issuer, audience,
// lifetime, object and tenant ids; Azurite does not check signatures),
// only for the right client id and secret, and counts them.
type Entra struct {
	*httptest.Server
	Issued atomic.Int32
}

// NewEntra starts the stand-in over TLS for one tenant and client.
func NewEntra(tb testing.TB, tenant, clientID, secret string) *Entra {
	e := &Entra{}
	mux := http.NewServeMux()
	mux.HandleFunc("/"+tenant+"/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		base := e.URL + "/" + tenant
		_ = json.NewEncoder(w).Encode(map[string]any{"token_endpoint": base + "/oauth2/v2.0/token",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize", "issuer": base + "/v2.0"})
	})
	mux.HandleFunc("/"+tenant+"/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != secret {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client"})
			return
		}
		now := time.Now().Unix()
		claims, _ := json.Marshal(map[string]any{"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/" + tenant + "/",
			"iat": now - 60, "nbf": now - 60, "exp": now + 3600, "oid": "7a1d3c52-0000-4000-8000-00000000c0de", "tid": tenant})
		enc := base64.RawURLEncoding
		jwt := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte("unsigned"))
		e.Issued.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": jwt, "token_type": "Bearer", "expires_in": 3600})
	})
	e.Server = httptest.NewTLSServer(mux)
	tb.Cleanup(e.Close)
	return e
}
