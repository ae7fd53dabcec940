package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// vendingSetup is setup with a sealer, the S3 vendor and logs captured.
// The warehouse also allows gs://warehouse and a local directory (kept in
// bundle.warehouse), where registerS3Table puts its metadata files.
func vendingSetup(t *testing.T) (*bundle, *lockedBuffer) {
	st := openStore(t, "sqlite")
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{9}, 32))
	require.NoError(t, err)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: log, Sealer: sealer, Credentials: vending.New(sealer)})
	local := "file://" + t.TempDir()
	_, err = svc.CreateWarehouse(context.Background(), "wh", "s3://warehouse", map[string]string{"allowed-locations": "gs://warehouse," + local})
	require.NoError(t, err)
	srv := server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: local, store: st, client: hs.Client()}, logs
}

// registerS3Table registers a table whose location is on S3 from a local
// metadata file (the catalog needs no object-store access for that).
func registerS3Table(t *testing.T, b *bundle, name, location string) {
	t.Helper()
	meta := map[string]any{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": location,
		"last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 1, "current-schema-id": 0,
		"schemas":         []any{map[string]any{"type": "struct", "schema-id": 0, "fields": []any{map[string]any{"id": 1, "name": "id", "type": "long", "required": true}}}},
		"partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}}, "default-spec-id": 0, "last-partition-id": 999,
		"sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}}, "default-sort-order-id": 0}
	data, err := json.Marshal(meta)
	require.NoError(t, err)
	path := filepath.Join(strings.TrimPrefix(b.warehouse, "file://"), name, "00000-x.metadata.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": name, "metadata-location": "file://" + path})
	require.Equal(t, 200, r.status, "%s", r.body)
}

const catalogSecret = "catalogsecret"

func TestStorageProfileSecretsNeverLeak(t *testing.T) {
	ep := os.Getenv("SEAWEED_S3_ENDPOINT")
	sts := ep
	if sts == "" {
		sts = "http://127.0.0.1:1" // nothing listens: STS fails, on loopback only
	}
	b, logs := vendingSetup(t)
	profile := map[string]any{"type": "s3", "region": "us-east-1", "endpoint": sts, "path-style-access": true, "sts-endpoint": sts,
		"role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole", "access-key-id": "catalog", "secret-access-key": catalogSecret}
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", profile)
	require.Equal(t, 200, r.status, "%s", r.body)
	var seen []string
	seen = append(seen, string(r.body))
	seen = append(seen, string(b.do(t, "GET", "/management/v1/warehouses/wh/storage-profile", nil).body))
	seen = append(seen, string(b.do(t, "GET", "/management/v1/warehouses/wh", nil).body))
	seen = append(seen, string(b.do(t, "GET", "/management/v1/warehouses", nil).body))
	bad := map[string]any{"type": "s3", "region": "us-east-1", "role-arn": "r", "access-key-id": "catalog", "secret-access-key": catalogSecret, "sse-type": "dsse-kms"}
	r = b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", bad)
	require.Equal(t, 400, r.status)
	seen = append(seen, string(r.body))
	b.createNamespace(t, "ns")
	registerS3Table(t, b, "t", "s3://warehouse/ns/t")
	var vended map[string]any
	if ep != "" {
		r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Iceberg-Access-Delegation", "vended-credentials")
		require.Equal(t, 200, r.status, "%s", r.body)
		vended = r.json(t)
	} else {
		// Without SeaweedFS the STS call fails: the error must not leak either.
		r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Iceberg-Access-Delegation", "vended-credentials")
		require.Equal(t, 503, r.status)
	}
	seen = append(seen, string(r.body))
	stored, err := b.store.WarehouseGet(context.Background(), "wh")
	require.NoError(t, err)
	require.NotContains(t, stored.StorageProfile, catalogSecret, "sealed at rest")
	for _, s := range append(seen, logs.String()) {
		require.NotContains(t, s, catalogSecret)
	}
	if vended != nil {
		// Vended session credentials appear only in the response, never in logs.
		cfg := vended["config"].(map[string]any)
		for _, k := range []string{"s3.secret-access-key", "s3.session-token"} {
			require.NotEmpty(t, cfg[k])
			require.False(t, strings.Contains(logs.String(), cfg[k].(string)), "%s leaked into logs", k)
		}
	}
}

func TestVendedCredentialsOnLoad(t *testing.T) {
	ep := seaweedEndpoint(t)
	b, _ := vendingSetup(t)
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": ep, "path-style-access": true, "sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
		"access-key-id": "catalog", "secret-access-key": catalogSecret})
	require.Equal(t, 200, r.status, "%s", r.body)
	b.createNamespace(t, "ns")
	registerS3Table(t, b, "t", "s3://warehouse/ns/t")

	plain := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil)
	require.Equal(t, 200, plain.status)
	require.NotContains(t, plain.json(t), "storage-credentials", "no credentials unless asked")

	r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Iceberg-Access-Delegation", "vended-credentials")
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		Config map[string]string `json:"config"`
		Creds  []struct {
			Prefix string            `json:"prefix"`
			Config map[string]string `json:"config"`
		} `json:"storage-credentials"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	for k := range res.Config {
		require.Contains(t, []string{"client.region", "s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.endpoint", "s3.path-style-access"}, k)
	}
	require.Len(t, res.Creds, 1)
	require.Equal(t, "s3://warehouse/ns/t", res.Creds[0].Prefix)
	require.Equal(t, "v1/wh/namespaces/ns/tables/t/credentials", res.Creds[0].Config["client.refresh-credentials-endpoint"])
	require.NotEmpty(t, res.Creds[0].Config["s3.session-token-expires-at-ms"])

	lc := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t/credentials", nil)
	require.Equal(t, 200, lc.status, "%s", lc.body)
	var got struct {
		Creds []struct {
			Prefix string `json:"prefix"`
		} `json:"storage-credentials"`
	}
	require.NoError(t, json.Unmarshal(lc.body, &got))
	require.Len(t, got.Creds, 1, "exactly one credential per storage type")
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/nope/credentials", nil).status)
}

// TestCreateOnS3WithProfile: the catalog writes metadata to S3 with the
// profile's identity and vends table-scoped credentials on create.
func TestCreateOnS3WithProfile(t *testing.T) {
	ep := seaweedEndpoint(t)
	ensureBucket(t, ep, "warehouse")
	b, _ := vendingSetup(t)
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": ep, "path-style-access": true, "sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
		"access-key-id": "catalog", "secret-access-key": catalogSecret})
	require.Equal(t, 200, r.status, "%s", r.body)
	b.createNamespace(t, "ns")
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "s3t", "schema": rawJSON(testSchema)},
		"X-Iceberg-Access-Delegation", "vended-credentials")
	require.Equal(t, 200, r.status, "%s", r.body)
	res := r.json(t)
	require.True(t, strings.HasPrefix(res["metadata-location"].(string), "s3://warehouse/ns/s3t-"))
	require.NotEmpty(t, res["config"].(map[string]any)["s3.session-token"])
	// Loading checks the metadata file on S3 too.
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/s3t", nil).status)
	// A later request writes through the cached S3 IO (regression: it kept
	// the first request's context and failed once that request ended).
	c := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/s3t", setProps("k", "v"))
	require.Equal(t, 200, c.status, "%s", c.body)
}

// ensureBucket creates a bucket with SeaweedFS's admin identity (from
// integration/seaweed/iam.json) unless it exists.
// seaweedEndpoint returns SeaweedFS's S3 endpoint, skipping the test when
// none runs (make test starts one and then requires it).
func seaweedEndpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv("SEAWEED_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_SEAWEED") == "1" {
			t.Fatal("SEAWEED_S3_ENDPOINT is not set but SeaweedFS is required")
		}
		t.Skip("needs SeaweedFS: SEAWEED_S3_ENDPOINT (make test starts it)")
	}
	return ep
}

func ensureBucket(t *testing.T, ep, bucket string) {
	t.Helper()
	admin := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: awscreds.NewStaticCredentialsProvider("admin", "adminsecret", "")})
	_, err := admin.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var owned *s3types.BucketAlreadyOwnedByYou
	var exists *s3types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) && !strings.Contains(err.Error(), "BucketAlready") {
		require.NoError(t, err)
	}
}

// TestGCSVendingOnLoad: a gcs profile vends a downscoped token on load,
// with the GCS refresh key, and the service-account key never leaks. Google
// is replaced by a local stand-in for its token endpoint and STS (nothing
// real can run offline); this checks the catalog's side only.
func TestGCSVendingOnLoad(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "root", "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/v1/token", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-5f2c9e", "token_type": "Bearer", "expires_in": 3600,
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
	})
	google := httptest.NewServer(mux)
	defer google.Close()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	sa, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key": pemKey, "client_email": "c@proj.iam.gserviceaccount.com", "client_id": "1", "token_uri": google.URL + "/token"})

	b, logs := vendingSetup(t)
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "gcs", "project-id": "proj",
		"sts-endpoint": google.URL, "credentials-json": json.RawMessage(sa)})
	require.Equal(t, 200, r.status, "%s", r.body)
	shown := string(r.body) + string(b.do(t, "GET", "/management/v1/warehouses/wh/storage-profile", nil).body)
	b.createNamespace(t, "ns")
	registerS3Table(t, b, "g", "gs://warehouse/ns/g")
	r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/g", nil, "X-Iceberg-Access-Delegation", "vended-credentials")
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		Config map[string]string `json:"config"`
		Creds  []struct {
			Config map[string]string `json:"config"`
		} `json:"storage-credentials"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Equal(t, "tok-5f2c9e", res.Config["gcs.oauth2.token"])
	require.Equal(t, "v1/wh/namespaces/ns/tables/g/credentials", res.Creds[0].Config["gcs.oauth2.refresh-credentials-endpoint"])
	stored, err := b.store.WarehouseGet(context.Background(), "wh")
	require.NoError(t, err)
	keyBody := strings.Split(pemKey, "\n")[1] // a line of the key itself
	for _, s := range []string{shown, logs.String(), stored.StorageProfile} {
		require.NotContains(t, s, keyBody, "the service-account key leaked")
	}
	require.NotContains(t, logs.String(), "tok-5f2c9e", "the vended token is not logged")
}
