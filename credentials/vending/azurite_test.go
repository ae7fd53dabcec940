package vending_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/azuritetest"
)

// These tests run against Azurite, Microsoft's Azure Storage emulator,
// started by scripts/test.sh (scripts/azurite-start.sh) over HTTPS with
// OAuth checking on. What Azurite cannot check is said where it matters:
// it has no hierarchical namespace and ignores a directory SAS (sr=d, the
// only SAS that confines a client to one table), so the scope of a vended
// token is checked by its fields here; its signature, permissions and the
// delegation-key flow are checked by Azurite on container SAS tokens the
// same code signs.

const (
	azAccount = azuritetest.Account
	azKey     = azuritetest.Key
)

// withSAS returns a client that authenticates with nothing but the SAS.
func withSAS(t *testing.T, ep string, rt http.RoundTripper, token string) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientWithNoCredential(ep+"/"+azAccount+"?"+token, azuritetest.Options(rt))
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
	ep, rt := azuritetest.Endpoint(t)
	azuritetest.EnsureContainer(t, ep, rt, "lake")
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

func TestADLSUserDelegationOnAzurite(t *testing.T) {
	tenant := "72f988bf-0000-4000-8000-000000000001"
	idp := azuritetest.NewEntra(t, tenant, "lakehold-app", "app-secret-91c")
	ep, rt := azuritetest.Endpoint(t, idp.Certificate())
	azuritetest.EnsureContainer(t, ep, rt, "udk")
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
	require.Equal(t, int32(1), idp.Issued.Load(), "one token and one delegation key serve every SAS")

	_, wrong := adlsProfile(t, sealer, map[string]any{"type": "adls", "account-name": azAccount, "filesystem": "udk",
		"endpoint": ep, "tenant-id": tenant, "client-id": "lakehold-app", "client-secret": "wrong",
		"authority-host": idp.URL})
	_, _, err = v.Vend(ctx, wrong, "abfss://udk@"+azAccount+".dfs.core.windows.net/wh/ns/t2", credentials.AccessRead)
	require.Error(t, err, "Entra refuses a wrong secret")
}
