package vending_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
)

// These tests run against Azurite, Microsoft's Azure Storage emulator,
// started by scripts/test.sh (scripts/azurite-start.sh) over HTTPS with
// OAuth checking on. What Azurite cannot check is said where it matters:
// it has no hierarchical namespace and ignores a directory SAS (sr=d, the
// only SAS that confines a client to one table), so the scope of a vended
// token is checked by its fields here; its signature, permissions and the
// delegation-key flow are checked by Azurite on container SAS tokens the
// same code signs.

// Azurite's well-known development account.
const (
	azAccount = "devstoreaccount1"
	azKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azurite returns Azurite's Blob endpoint and a transport trusting its
// certificate (and extra, e.g. a stand-in identity provider's).
func azurite(t *testing.T, extra ...*x509.Certificate) (string, *http.Transport) {
	t.Helper()
	ep := os.Getenv("AZURITE_BLOB_ENDPOINT")
	if ep == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_AZURITE") == "1" {
			t.Fatal("AZURITE_BLOB_ENDPOINT is not set but Azurite is required")
		}
		t.Skip("needs Azurite: AZURITE_BLOB_ENDPOINT and AZURITE_CA (make test starts it)")
	}
	pemBytes, err := os.ReadFile(os.Getenv("AZURITE_CA"))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pemBytes))
	for _, c := range extra {
		pool.AddCert(c)
	}
	return ep, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
}

func blobOpts(rt http.RoundTripper) *azblob.ClientOptions {
	return &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: rt}, Retry: policy.RetryOptions{MaxRetries: -1}}}
}

// ensureContainer creates the container with the account key unless it exists.
func ensureContainer(t *testing.T, ep string, rt http.RoundTripper, name string) {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(azAccount, azKey)
	require.NoError(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(ep+"/"+azAccount, cred, blobOpts(rt))
	require.NoError(t, err)
	_, err = c.CreateContainer(context.Background(), name, nil)
	if err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		require.NoError(t, err)
	}
}

// withSAS returns a client that authenticates with nothing but the SAS.
func withSAS(t *testing.T, ep string, rt http.RoundTripper, token string) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientWithNoCredential(ep+"/"+azAccount+"?"+token, blobOpts(rt))
	require.NoError(t, err)
	return c
}

func upload(c *azblob.Client, container, key string) error {
	_, err := c.UploadBuffer(context.Background(), container, key, []byte("data"), nil)
	return err
}

func download(c *azblob.Client, container, key string) error {
	r, err := c.DownloadStream(context.Background(), container, key, nil)
	if err == nil {
		r.Body.Close()
	}
	return err
}

func refused(t *testing.T, err error, what string) {
	t.Helper()
	var re *azcore.ResponseError
	require.True(t, errors.As(err, &re), "%s must be refused by Azurite, got %v", what, err)
	require.Equal(t, 403, re.StatusCode, "%s", what)
}

func adlsProfile(t *testing.T, sealer *credentials.Sealer, fields map[string]any) (*credentials.ADLSProfile, credentials.WarehouseInfo) {
	t.Helper()
	raw, _ := json.Marshal(fields)
	p, err := credentials.ParseADLSProfile(raw, sealer)
	require.NoError(t, err)
	stored, _ := json.Marshal(p)
	return p, credentials.WarehouseInfo{Name: "wh", StorageProfile: string(stored)}
}

// checkDirectorySAS checks what confines a vended token to the table: a
// directory SAS on exactly its directory, at the level's permissions,
// https only, expiring after the profile's lifetime.
func checkDirectorySAS(t *testing.T, cfg map[string]string, dir, perms string, lifetime time.Duration) url.Values {
	t.Helper()
	token := cfg["adls.sas-token."+azAccount+".dfs.core.windows.net"]
	require.NotEmpty(t, token, "%v", cfg)
	require.Equal(t, token, cfg["adls.sas-token."+azAccount+".blob.core.windows.net"])
	q, err := url.ParseQuery(token)
	require.NoError(t, err)
	require.Equal(t, "d", q.Get("sr"), "a directory SAS")
	require.Equal(t, strconv.Itoa(strings.Count(dir, "/")+1), q.Get("sdd"), "depth of %s", dir)
	require.Equal(t, perms, q.Get("sp"))
	require.Equal(t, "https", q.Get("spr"))
	se, err := time.Parse(time.RFC3339, q.Get("se"))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(lifetime), se, 2*time.Minute)
	ms, err := strconv.ParseInt(cfg["adls.sas-token-expires-at-ms."+azAccount+".dfs.core.windows.net"], 10, 64)
	require.NoError(t, err)
	require.Equal(t, se.Unix(), time.UnixMilli(ms).Unix())
	return q
}

func TestADLSSharedKeyOnAzurite(t *testing.T) {
	ep, rt := azurite(t)
	ensureContainer(t, ep, rt, "lake")
	sealer, _ := credentials.NewSealer(bytes.Repeat([]byte{3}, 32))
	p, wh := adlsProfile(t, sealer, map[string]any{"type": "adls", "account-name": azAccount, "filesystem": "lake",
		"endpoint": ep, "account-key": azKey})
	v := vending.NewADLS(sealer, rt)
	ctx := context.Background()
	loc := "abfss://lake@" + azAccount + ".dfs.core.windows.net/wh/ns/t"

	cfg, creds, err := v.Vend(ctx, wh, loc, credentials.AccessRead)
	require.NoError(t, err)
	q := checkDirectorySAS(t, cfg, "wh/ns/t", "rl", time.Hour)
	require.Empty(t, q.Get("skoid"), "a shared-key SAS is a service SAS")
	require.Len(t, creds, 1)
	require.Equal(t, loc, creds[0].Prefix)
	rw, _, err := v.Vend(ctx, wh, loc, credentials.AccessReadWrite)
	require.NoError(t, err)
	checkDirectorySAS(t, rw, "wh/ns/t", "racwdl", time.Hour)
	again, _, err := v.Vend(ctx, wh, loc, credentials.AccessRead)
	require.NoError(t, err)
	require.Equal(t, cfg, again, "cached for half its lifetime")
	_, _, err = v.Vend(ctx, wh, "abfss://other@"+azAccount+".dfs.core.windows.net/wh/ns/t", credentials.AccessRead)
	require.Error(t, err, "never a SAS outside the profile's filesystem")
	_, _, err = v.Vend(ctx, wh, "abfss://lake@"+azAccount+".dfs.core.windows.net", credentials.AccessRead)
	require.Error(t, err, "never a SAS on the whole filesystem")

	// The same signer and permission mapping, checked by Azurite.
	ro, err := v.ContainerSAS(ctx, p, credentials.AccessRead)
	require.NoError(t, err)
	writer, err := v.ContainerSAS(ctx, p, credentials.AccessReadWrite)
	require.NoError(t, err)
	require.NoError(t, upload(withSAS(t, ep, rt, writer), "lake", "wh/ns/t/data/a.parquet"))
	require.NoError(t, download(withSAS(t, ep, rt, ro), "lake", "wh/ns/t/data/a.parquet"))
	refused(t, upload(withSAS(t, ep, rt, ro), "lake", "wh/ns/t/data/b.parquet"), "a write with a read SAS")
	_, err = withSAS(t, ep, rt, ro).DeleteBlob(ctx, "lake", "wh/ns/t/data/a.parquet", nil)
	refused(t, err, "a delete with a read SAS")
	tampered := strings.Replace(ro, "sp=rl", "sp=racwdl", 1)
	refused(t, upload(withSAS(t, ep, rt, tampered), "lake", "wh/ns/t/data/c.parquet"), "a SAS with widened permissions")
	// Azurite ignores sr=d: the vended directory token is not accepted
	// there at all, so its confinement to wh/ns/t cannot be shown here.
	t.Log("Azurite has no hierarchical namespace: the directory SAS's scope is checked by its fields only")
}

// entra is a stand-in for Entra ID's token endpoint, which cannot run
// offline. It issues tokens Azurite's OAuth check accepts (issuer,
// audience, lifetime, object and tenant ids; Azurite does not check
// signatures) only for the right client secret, and counts them.
type entra struct {
	*httptest.Server
	issued atomic.Int32
}

func newEntra(t *testing.T, tenant, clientID, secret string) *entra {
	e := &entra{}
	mux := http.NewServeMux()
	mux.HandleFunc("/"+tenant+"/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		base := e.URL + "/" + tenant
		_ = json.NewEncoder(w).Encode(map[string]any{"token_endpoint": base + "/oauth2/v2.0/token",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize", "issuer": base + "/v2.0"})
	})
	mux.HandleFunc("/"+tenant+"/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != secret {
			w.WriteHeader(401)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client"})
			return
		}
		now := time.Now().Unix()
		claims, _ := json.Marshal(map[string]any{"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/" + tenant + "/",
			"iat": now - 60, "nbf": now - 60, "exp": now + 3600, "oid": "7a1d3c52-0000-4000-8000-00000000c0de", "tid": tenant})
		enc := base64.RawURLEncoding
		jwt := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte("unsigned"))
		e.issued.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": jwt, "token_type": "Bearer", "expires_in": 3600})
	})
	e.Server = httptest.NewTLSServer(mux)
	t.Cleanup(e.Close)
	return e
}

func TestADLSUserDelegationOnAzurite(t *testing.T) {
	tenant := "72f988bf-0000-4000-8000-000000000001"
	idp := newEntra(t, tenant, "lakehold-app", "app-secret-91c")
	ep, rt := azurite(t, idp.Certificate())
	ensureContainer(t, ep, rt, "udk")
	sealer, _ := credentials.NewSealer(bytes.Repeat([]byte{4}, 32))
	p, wh := adlsProfile(t, sealer, map[string]any{"type": "adls", "account-name": azAccount, "filesystem": "udk",
		"endpoint": ep, "tenant-id": tenant, "client-id": "lakehold-app", "client-secret": "app-secret-91c",
		"authority-host": idp.URL, "sas-lifetime": "20m"})
	v := vending.NewADLS(sealer, rt)
	ctx := context.Background()

	cfg, _, err := v.Vend(ctx, wh, "wasbs://udk@"+azAccount+".blob.core.windows.net/wh/ns/t2", credentials.AccessReadWrite)
	require.NoError(t, err)
	q := checkDirectorySAS(t, cfg, "wh/ns/t2", "racwdl", 20*time.Minute)
	require.Equal(t, tenant, q.Get("sktid"), "a user-delegation SAS")
	require.NotEmpty(t, q.Get("skoid"))

	// The catalog's own SAS, signed with the delegation key Azurite
	// issued for the stand-in's token, and checked by Azurite.
	own, err := v.CatalogSAS(ctx, p)
	require.NoError(t, err)
	require.NoError(t, upload(withSAS(t, ep, rt, own), "udk", "wh/ns/t2/metadata/00000.json"))
	require.NoError(t, download(withSAS(t, ep, rt, own), "udk", "wh/ns/t2/metadata/00000.json"))
	ro, err := v.ContainerSAS(ctx, p, credentials.AccessRead)
	require.NoError(t, err)
	require.NoError(t, download(withSAS(t, ep, rt, ro), "udk", "wh/ns/t2/metadata/00000.json"))
	refused(t, upload(withSAS(t, ep, rt, ro), "udk", "wh/ns/t2/metadata/00001.json"), "a write with a read SAS")
	require.Equal(t, int32(1), idp.issued.Load(), "one token and one delegation key serve every SAS")

	_, wrong := adlsProfile(t, sealer, map[string]any{"type": "adls", "account-name": azAccount, "filesystem": "udk",
		"endpoint": ep, "tenant-id": tenant, "client-id": "lakehold-app", "client-secret": "wrong",
		"authority-host": idp.URL})
	_, _, err = v.Vend(ctx, wrong, "abfss://udk@"+azAccount+".dfs.core.windows.net/wh/ns/t2", credentials.AccessRead)
	require.Error(t, err, "Entra refuses a wrong secret")
}
