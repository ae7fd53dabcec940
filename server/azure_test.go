package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/azuritetest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// iceberg-go's Azure FileIO, which writes the catalog's metadata, takes
// no HTTP client from us: Azurite's certificate is trusted process-wide.
func init() { azuritetest.TrustForProcess() }

// azureSetup serves a catalog whose warehouse lives on Azurite, in
// container, with the vendor's HTTP on rt.
func azureSetup(t *testing.T, container string, rt *vending.ADLS, sealer *credentials.Sealer) (*bundle, *lockedBuffer) {
	t.Helper()
	st := openStore(t, "sqlite")
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	v := vending.New(sealer)
	v.ADLS = rt
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: log, Sealer: sealer, Credentials: v})
	_, err := svc.CreateWarehouse(context.Background(), "wh", "abfss://"+container+"@"+azuritetest.Account+".dfs.core.windows.net/wh", nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log}))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, store: st, client: hs.Client()}, logs
}

// blobsUnder lists the container's blob names under prefix.
func blobsUnder(t *testing.T, c *azblob.Client, container, prefix string) []string {
	t.Helper()
	var names []string
	pager := c.NewListBlobsFlatPager(container, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		require.NoError(t, err)
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	return names
}

// exerciseAzureTable creates, commits to and loads a table through the
// REST API: the catalog writes and reads its metadata on Azurite, and
// vends a SAS for the table's directory.
func exerciseAzureTable(t *testing.T, b *bundle, admin *azblob.Client, container string) {
	t.Helper()
	b.createNamespace(t, "ns")
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)},
		"X-Iceberg-Access-Delegation", "vended-credentials")
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		MetadataLocation string            `json:"metadata-location"`
		Metadata         map[string]any    `json:"metadata"`
		Config           map[string]string `json:"config"`
		Creds            []struct {
			Prefix string            `json:"prefix"`
			Config map[string]string `json:"config"`
		} `json:"storage-credentials"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	loc := res.Metadata["location"].(string)
	require.True(t, strings.HasPrefix(loc, "abfss://"+container+"@"+azuritetest.Account+".dfs.core.windows.net/wh/ns/t"), loc)
	dir := strings.TrimPrefix(loc, "abfss://"+container+"@"+azuritetest.Account+".dfs.core.windows.net/")
	names := blobsUnder(t, admin, container, dir+"/metadata/")
	require.Len(t, names, 1, "the catalog wrote the first metadata file to Azure storage")
	require.True(t, strings.HasSuffix(res.MetadataLocation, names[0]))

	token := res.Config["adls.sas-token."+azuritetest.Account+".dfs.core.windows.net"]
	require.Contains(t, token, "sr=d", "a SAS confined to the table directory")
	require.Contains(t, token, "sdd="+strconv.Itoa(strings.Count(dir, "/")+1))
	require.Equal(t, token, res.Config["adls.sas-token."+azuritetest.Account+".blob.core.windows.net"])
	require.Len(t, res.Creds, 1)
	require.Equal(t, loc, res.Creds[0].Prefix)
	require.Equal(t, "v1/wh/namespaces/ns/tables/t/credentials", res.Creds[0].Config["adls.refresh-credentials-endpoint"])
	for k := range res.Config {
		require.True(t, strings.HasPrefix(k, "adls.sas-token"), "only SAS keys are vended: %s", k)
	}

	c := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("owner", "ml"))
	require.Equal(t, 200, c.status, "%s", c.body)
	require.Len(t, blobsUnder(t, admin, container, dir+"/metadata/"), 2)
	l := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil)
	require.Equal(t, 200, l.status, "%s", l.body)
	require.Contains(t, string(l.body), `"owner":"ml"`)
	lc := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t/credentials", nil)
	require.Equal(t, 200, lc.status, "%s", lc.body)
	require.Contains(t, string(lc.body), "adls.sas-token.")

	// A table outside the warehouse's container is refused before any
	// storage is touched.
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "out", "schema": rawJSON(testSchema),
		"location": "abfss://other@" + azuritetest.Account + ".dfs.core.windows.net/wh/ns/out"})
	require.Equal(t, 400, r.status, "%s", r.body)
}

// TestAzureWarehouseWithAccountKey: an adls profile with the account key;
// the key never reaches a response, a log line or the stored profile.
func TestAzureWarehouseWithAccountKey(t *testing.T) {
	ep, rt := azuritetest.Endpoint(t)
	azuritetest.EnsureContainer(t, ep, rt, "lakekey")
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{5}, 32))
	require.NoError(t, err)
	b, logs := azureSetup(t, "lakekey", vending.NewADLS(sealer, rt), sealer)
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "adls",
		"account-name": azuritetest.Account, "filesystem": "otherfs", "endpoint": ep, "account-key": azuritetest.Key})
	require.Equal(t, 400, r.status, "a profile whose filesystem does not hold the warehouse: %s", r.body)
	require.NotContains(t, string(r.body), azuritetest.Key[:20])
	r = b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "adls",
		"account-name": azuritetest.Account, "filesystem": "lakekey", "endpoint": ep, "account-key": azuritetest.Key})
	require.Equal(t, 200, r.status, "%s", r.body)
	shown := string(r.body) + string(b.do(t, "GET", "/management/v1/warehouses/wh/storage-profile", nil).body)
	exerciseAzureTable(t, b, azuritetest.Admin(t, ep, rt), "lakekey")
	stored, err := b.store.WarehouseGet(context.Background(), "wh")
	require.NoError(t, err)
	for _, s := range []string{shown, logs.String(), stored.StorageProfile} {
		require.NotContains(t, s, azuritetest.Key[:20], "the account key leaked")
	}
	require.NotContains(t, logs.String(), "sig=", "no SAS is logged")
}

// TestAzureWarehouseWithServicePrincipal: an adls profile with a service
// principal's secret. Entra ID is a local stand-in (nothing real runs
// offline); the delegation key and every SAS are Azurite's to check.
func TestAzureWarehouseWithServicePrincipal(t *testing.T) {
	tenant := "72f988bf-0000-4000-8000-0000000000aa"
	idp := azuritetest.NewEntra(t, tenant, "catalog-app", "principal-secret-4e1")
	ep, rt := azuritetest.Endpoint(t, idp.Certificate())
	azuritetest.EnsureContainer(t, ep, rt, "lakesp")
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{6}, 32))
	require.NoError(t, err)
	b, logs := azureSetup(t, "lakesp", vending.NewADLS(sealer, rt), sealer)
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "adls",
		"account-name": azuritetest.Account, "filesystem": "lakesp", "endpoint": ep, "tenant-id": tenant,
		"client-id": "catalog-app", "client-secret": "principal-secret-4e1", "authority-host": idp.URL})
	require.Equal(t, 200, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), "principal-secret-4e1")
	exerciseAzureTable(t, b, azuritetest.Admin(t, ep, rt), "lakesp")
	require.NotContains(t, logs.String(), "principal-secret-4e1")
	require.Equal(t, int32(1), idp.Issued.Load(), "one Entra token serves the catalog's and the vended SAS")
}
