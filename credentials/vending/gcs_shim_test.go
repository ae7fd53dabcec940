package vending_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/google/downscope"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
)

// This test runs fake-gcs-server behind an enforcing shim that applies the
// access boundaries our fake STS recorded for each token it minted. GCS has
// no offline STS or boundary enforcement: the shim is OUR MODEL of Google's
// semantics (the CEL subset we emit), so this proves the catalog builds the
// boundary, exchanges it and hands the token to clients, not that Google
// enforces it the same way.

type mintingSTS struct {
	mu     sync.Mutex
	n      int
	tokens map[string][]downscope.AccessBoundaryRule
}

func (m *mintingSTS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	switch r.URL.Path {
	case "/token": // service-account JWT grant: the root token
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "root-token", "token_type": "Bearer", "expires_in": 3600})
	case "/v1/token": // STS token exchange: a token bound to the boundary
		var opts struct {
			Boundary struct {
				Rules []downscope.AccessBoundaryRule `json:"accessBoundaryRules"`
			} `json:"accessBoundary"`
		}
		if r.Form.Get("subject_token") != "root-token" || json.Unmarshal([]byte(r.Form.Get("options")), &opts) != nil {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.n++
		tok := fmt.Sprintf("bounded-%d", m.n)
		m.tokens[tok] = opts.Boundary.Rules
		m.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
	default:
		http.NotFound(w, r)
	}
}

var (
	objectCond = regexp.MustCompile(`resource\.name\.startsWith\('([^']*)'\)`)
	listCond   = regexp.MustCompile(`api\.getAttribute\('storage\.googleapis\.com/objectListPrefix', ''\)\.startsWith\('([^']*)'\)`)
)

// allowed evaluates our boundary subset for one operation; anything not
// understood is denied (fail closed).
func allowed(rules []downscope.AccessBoundaryRule, bucket, op, object, listPrefix string) bool {
	for _, r := range rules {
		if r.AvailableResource != "//storage.googleapis.com/projects/_/buckets/"+bucket || r.Condition == nil {
			continue
		}
		role := strings.Join(r.AvailablePermissions, ",")
		if op != "get" && op != "list" && role != "inRole:roles/storage.objectAdmin" {
			continue
		}
		if op == "list" {
			if m := listCond.FindStringSubmatch(r.Condition.Expression); m != nil && strings.HasPrefix(listPrefix, m[1]) {
				return true
			}
			continue
		}
		if m := objectCond.FindStringSubmatch(r.Condition.Expression); m != nil &&
			strings.HasPrefix("projects/_/buckets/"+bucket+"/objects/"+object, m[1]) {
			return true
		}
	}
	return false
}

func shim(sts *mintingSTS, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		sts.mu.Lock()
		rules, ok := sts.tokens[tok]
		sts.mu.Unlock()
		path := r.URL.EscapedPath()
		var bucket, op, object string
		switch {
		case strings.HasPrefix(path, "/upload/storage/v1/b/") && r.Method == http.MethodPost:
			bucket, op, object = strings.Split(strings.TrimPrefix(path, "/upload/storage/v1/b/"), "/")[0], "create", r.URL.Query().Get("name")
		case strings.HasPrefix(path, "/storage/v1/b/"):
			rest := strings.TrimPrefix(path, "/storage/v1/b/")
			parts := strings.SplitN(rest, "/o", 2)
			bucket = parts[0]
			if len(parts) == 2 && strings.HasPrefix(parts[1], "/") {
				object, _ = url.PathUnescape(strings.TrimPrefix(parts[1], "/"))
				op = map[string]string{http.MethodGet: "get", http.MethodDelete: "delete"}[r.Method]
			} else if r.Method == http.MethodGet {
				op = "list"
			}
		}
		if !ok || op == "" || !allowed(rules, bucket, op, object, r.URL.Query().Get("prefix")) {
			http.Error(w, `{"error":{"code":403,"message":"denied by access boundary"}}`, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestGCSTokenEnforcedByShim(t *testing.T) {
	sts := &mintingSTS{tokens: map[string][]downscope.AccessBoundaryRule{}}
	google := httptest.NewServer(sts)
	defer google.Close()
	gcs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, InitialObjects: []fakestorage.Object{
		{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "warehouse", Name: "ns/table/data/a"}, Content: []byte("a")},
		{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "warehouse", Name: "ns/other/x"}, Content: []byte("o")},
		{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "warehouse", Name: "ns/table2/x"}, Content: []byte("t2")},
	}})
	require.NoError(t, err)
	store := httptest.NewServer(shim(sts, gcs.HTTPHandler()))
	defer store.Close()

	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{5}, 32))
	require.NoError(t, err)
	raw, _ := json.Marshal(map[string]any{"type": "gcs", "sts-endpoint": google.URL, "endpoint": store.URL,
		"credentials-json": json.RawMessage(serviceAccountKey(t, google.URL+"/token"))})
	stored, _, err := credentials.ParseProfile(raw, sealer)
	require.NoError(t, err)
	sj, _ := json.Marshal(stored)
	wh := credentials.WarehouseInfo{Name: "wh", Location: "gs://warehouse", StorageProfile: string(sj)}
	v := vending.New(sealer)

	call := func(tok, method, path string, body []byte) int {
		req, _ := http.NewRequest(method, store.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	cfg, _, err := v.Vend(context.Background(), wh, "gs://warehouse/ns/table", credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, store.URL, cfg["gcs.service.host"])
	rw := cfg["gcs.oauth2.token"]
	require.Equal(t, 200, call(rw, "GET", "/storage/v1/b/warehouse/o/ns%2Ftable%2Fdata%2Fa?alt=media", nil), "read in the table")
	require.Equal(t, 200, call(rw, "POST", "/upload/storage/v1/b/warehouse/o?uploadType=media&name=ns/table/data/b", []byte("b")), "write in the table")
	require.Equal(t, 200, call(rw, "GET", "/storage/v1/b/warehouse/o?prefix=ns/table/", nil), "list the table")
	require.Contains(t, []int{200, 204}, call(rw, "DELETE", "/storage/v1/b/warehouse/o/ns%2Ftable%2Fdata%2Fb", nil), "delete in the table")
	require.Equal(t, 403, call(rw, "GET", "/storage/v1/b/warehouse/o/ns%2Fother%2Fx?alt=media", nil), "a sibling table")
	require.Equal(t, 403, call(rw, "GET", "/storage/v1/b/warehouse/o/ns%2Ftable2%2Fx?alt=media", nil), "a look-alike prefix")
	require.Equal(t, 403, call(rw, "POST", "/upload/storage/v1/b/warehouse/o?uploadType=media&name=ns/other/y", []byte("y")), "write outside")
	require.Equal(t, 403, call(rw, "GET", "/storage/v1/b/warehouse/o", nil), "list the whole bucket")
	require.Equal(t, 403, call("not-a-token", "GET", "/storage/v1/b/warehouse/o/ns%2Ftable%2Fdata%2Fa?alt=media", nil), "unknown token")

	rcfg, _, err := v.Vend(context.Background(), wh, "gs://warehouse/ns/table", credentials.AccessRead)
	require.NoError(t, err)
	ro := rcfg["gcs.oauth2.token"]
	require.Equal(t, 200, call(ro, "GET", "/storage/v1/b/warehouse/o/ns%2Ftable%2Fdata%2Fa?alt=media", nil), "read-only reads")
	require.Equal(t, 403, call(ro, "POST", "/upload/storage/v1/b/warehouse/o?uploadType=media&name=ns/table/data/c", []byte("c")), "read-only cannot write")
}
