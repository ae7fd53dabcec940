package vending_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
)

// fakeGoogle stands in for Google's OAuth token endpoint and STS: nothing
// real can run offline. It checks the requests the catalog sends and
// records the access boundaries; it proves our side of the exchange, not
// Google's enforcement.
type fakeGoogle struct {
	mu         sync.Mutex
	boundaries []string
	exchanges  int
}

func (f *fakeGoogle) handler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		require.Equal(t, "urn:ietf:params:oauth:grant-type:jwt-bearer", r.Form.Get("grant_type"))
		require.NotEmpty(t, r.Form.Get("assertion"), "a signed service-account JWT")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "root-token", "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/v1/token", func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		require.Equal(t, "urn:ietf:params:oauth:grant-type:token-exchange", r.Form.Get("grant_type"))
		require.Equal(t, "root-token", r.Form.Get("subject_token"))
		f.mu.Lock()
		f.boundaries = append(f.boundaries, r.Form.Get("options"))
		f.exchanges++
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "downscoped-token", "token_type": "Bearer",
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "expires_in": 3600})
	})
	return mux
}

func serviceAccountKey(t *testing.T, tokenURI string) []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "catalog@proj.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI})
	return b
}

func TestGCSDownscopedTokens(t *testing.T) {
	fg := &fakeGoogle{}
	srv := httptest.NewServer(fg.handler(t))
	defer srv.Close()
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{3}, 32))
	require.NoError(t, err)
	key := serviceAccountKey(t, srv.URL+"/token")
	raw, _ := json.Marshal(map[string]any{"type": "gcs", "project-id": "proj", "sts-endpoint": srv.URL, "credentials-json": json.RawMessage(key)})
	stored, redacted, err := credentials.ParseProfile(raw, sealer)
	require.NoError(t, err)
	storedJSON, _ := json.Marshal(stored)
	require.NotContains(t, string(storedJSON), "PRIVATE KEY", "the key is sealed")
	shown, _ := json.Marshal(redacted)
	require.NotContains(t, string(shown), "sealed")
	require.NotContains(t, string(shown), "PRIVATE KEY")

	v := vending.New(sealer)
	wh := credentials.WarehouseInfo{Name: "wh", Location: "gs://warehouse", StorageProfile: string(storedJSON)}
	cfg, creds, err := v.Vend(context.Background(), wh, "gs://warehouse/ns/table", credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, "downscoped-token", cfg["gcs.oauth2.token"])
	require.NotEmpty(t, cfg["gcs.oauth2.token-expires-at"])
	require.Equal(t, "proj", cfg["gcs.project-id"])
	require.Len(t, creds, 1)
	require.Equal(t, "gs://warehouse/ns/table", creds[0].Prefix)
	// The exact boundary sent to STS (the same JSON recorded in infra.md §2.3).
	require.Len(t, fg.boundaries, 1)
	require.JSONEq(t, `{"accessBoundary":{"accessBoundaryRules":[{"availableResource":"//storage.googleapis.com/projects/_/buckets/warehouse","availablePermissions":["inRole:roles/storage.objectAdmin"],"availabilityCondition":{"expression":"resource.name.startsWith('projects/_/buckets/warehouse/objects/ns/table/') || api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('ns/table/')"}}]}}`, fg.boundaries[0])

	// Cached: a second load makes no exchange; read-only is its own token.
	_, _, err = v.Vend(context.Background(), wh, "gs://warehouse/ns/table", credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, 1, fg.exchanges)
	_, _, err = v.Vend(context.Background(), wh, "gs://warehouse/ns/table", credentials.AccessRead)
	require.NoError(t, err)
	require.Equal(t, 2, fg.exchanges)
	require.Contains(t, fg.boundaries[1], "inRole:roles/storage.objectViewer")
	_, _, err = v.Vend(context.Background(), wh, "s3://warehouse/ns/table", credentials.AccessRead)
	require.Error(t, err, "a gcs profile vends for gs:// only")
}
