package server_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// signingSetup starts a catalog under RBAC whose warehouse lives on
// SeaweedFS with a signing-only storage profile (no role to assume: the
// catalog cannot vend, so every engine signs), with table ns.t created by
// the operator. alice may read the table's data, bob may also write it.
func signingSetup(t *testing.T) (*bundle, string, *service.AuditLog) {
	ep := seaweedEndpoint(t)
	ensureBucket(t, ep, "warehouse")
	st := openStore(t, "sqlite")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{9}, 32))
	require.NoError(t, err)
	audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: quiet})
	t.Cleanup(audit.Close)
	v := vending.New(sealer)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Sealer: sealer, Credentials: v, Signer: v,
		Authorizer: access.NewRBAC(st), Audit: audit})
	local := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal})
	wh := fmt.Sprintf("sign%d", time.Now().UnixNano())
	_, err = svc.CreateWarehouse(local, "wh", "s3://warehouse/"+wh, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(withTestPrincipal(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, store: st, client: hs.Client(), svc: svc}
	as := func(method, path string, body any) response {
		return b.do(t, method, path, body, "X-Test-Principal", "local")
	}
	r := as("PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": ep, "path-style-access": true, "remote-signing-enabled": true,
		"access-key-id": "catalog", "secret-access-key": catalogSecret})
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, 200, as("POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}).status)
	for _, name := range []string{"t", "t2"} {
		r = as("POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": name, "schema": jsonRaw(testSchema)})
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	for role, privs := range map[string][]string{"readers": {"table-read-data"}, "writers": {"table-write-data"}} {
		require.Equal(t, 200, as("POST", "/management/v1/roles", map[string]any{"name": role}).status)
		for _, priv := range append(privs, "table-read-metadata") {
			require.Equal(t, 204, as("POST", "/management/v1/roles/"+role+"/grants", map[string]any{
				"privilege": priv, "resource": map[string]any{"kind": "table", "warehouse": "wh", "namespace": []string{"ns"}, "name": "t"}}).status)
		}
	}
	require.Equal(t, 204, as("POST", "/management/v1/roles/readers/assignments", map[string]any{"kind": "builtin", "name": "alice"}).status)
	require.Equal(t, 204, as("POST", "/management/v1/roles/writers/assignments", map[string]any{"kind": "builtin", "name": "bob"}).status)
	return b, ep, audit
}

// signer sends requests to SeaweedFS the way an engine with remote
// signing does: each one is signed by the catalog first, as who.
type signer struct {
	t   *testing.T
	b   *bundle
	who string
}

// send signs method uri (with headers and, for DeleteObjects, the body
// in the sign request) and, when the catalog signs it, sends it to S3. It
// returns the sign route's status and S3's status and body.
func (s signer) send(method, uri string, headers map[string][]string, body []byte, bodyInSign bool) (int, int, string) {
	s.t.Helper()
	if headers == nil {
		headers = map[string][]string{}
	}
	req := map[string]any{"region": "us-east-1", "uri": uri, "method": method, "headers": headers}
	if bodyInSign {
		req["body"] = string(body)
	}
	r := s.b.do(s.t, "POST", "/v1/wh/namespaces/ns/tables/t/sign", req, "X-Test-Principal", s.who)
	if r.status != 200 {
		return r.status, 0, string(r.body)
	}
	var signed struct {
		URI     string              `json:"uri"`
		Headers map[string][]string `json:"headers"`
	}
	require.NoError(s.t, json.Unmarshal(r.body, &signed))
	// The catalog answers the URI it checked, re-encoded as SigV4 reads
	// it: the same path and query, perhaps spelled otherwise.
	asked, err := url.Parse(uri)
	require.NoError(s.t, err)
	got, err := url.Parse(signed.URI)
	require.NoError(s.t, err)
	require.Equal(s.t, [2]any{asked.Path, asked.Query()}, [2]any{got.Path, got.Query()})
	out, err := http.NewRequest(method, signed.URI, bytes.NewReader(body))
	require.NoError(s.t, err)
	for k, vs := range signed.Headers {
		if strings.EqualFold(k, "Host") || strings.EqualFold(k, "Content-Length") {
			continue // net/http sets both from the URL and the body
		}
		for _, v := range vs {
			out.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(out)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return 200, resp.StatusCode, string(data)
}

// requireSigningShapes checks a LoadTableResult that turns remote signing
// on carries both shapes: the config keys 1.11 clients read
// (s3.remote-signing-enabled, s3.signer.endpoint) and the spec's
// remote-signing-config object, with its properties and headers maps.
func requireSigningShapes(t *testing.T, body []byte) {
	t.Helper()
	var res struct {
		Config        map[string]string `json:"config"`
		SigningConfig *struct {
			Properties map[string]string   `json:"properties"`
			Headers    map[string][]string `json:"headers"`
		} `json:"remote-signing-config"`
	}
	require.NoError(t, json.Unmarshal(body, &res))
	require.Equal(t, "true", res.Config["s3.remote-signing-enabled"])
	require.NotEmpty(t, res.Config["s3.signer.endpoint"], "1.11 clients still find the deprecated keys")
	require.NotNil(t, res.SigningConfig, "remote-signing-config is sent with signing on")
	require.NotNil(t, res.SigningConfig.Properties, "properties is an object, not null")
	require.NotNil(t, res.SigningConfig.Headers, "headers is an object, not null")
}

// TestRemoteSigningS3: engines with no storage keys read, write, list,
// upload in parts and delete a table's objects on SeaweedFS through the
// catalog's signatures, at the level their grants allow, and nothing
// outside the table is signed. SeaweedFS checks every signature, so a
// signature replayed on another key fails there.
func TestRemoteSigningS3(t *testing.T) {
	b, ep, audit := signingSetup(t)
	r := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Test-Principal", "builtin:bob",
		"X-Iceberg-Access-Delegation", "vended-credentials")
	require.Equal(t, 200, r.status, "%s", r.body)
	var loaded struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
		Config map[string]string `json:"config"`
		Creds  []any             `json:"storage-credentials"`
	}
	require.NoError(t, json.Unmarshal(r.body, &loaded))
	require.Equal(t, "true", loaded.Config["s3.remote-signing-enabled"], "a warehouse that cannot vend tells engines to sign")
	require.Equal(t, "v1/wh/namespaces/ns/tables/t/sign", loaded.Config["s3.signer.endpoint"])
	require.Equal(t, ep, loaded.Config["s3.endpoint"])
	requireSigningShapes(t, r.body)
	require.NotContains(t, string(r.body), "s3.access-key-id")
	require.NotContains(t, string(r.body), catalogSecret)
	require.Empty(t, loaded.Creds)

	key := strings.TrimPrefix(loaded.Metadata.Location, "s3://warehouse/")
	obj := ep + "/warehouse/" + key + "/data/a.bin"
	bob, alice := signer{t, b, "builtin:bob"}, signer{t, b, "builtin:alice"}
	ct := map[string][]string{"Content-Type": {"application/octet-stream"}}

	sign, s3status, body := bob.send("PUT", obj, ct, []byte("hello"), false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	sign, s3status, body = alice.send("GET", obj, nil, nil, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	require.Equal(t, "hello", body)
	sign, s3status, body = alice.send("GET", ep+"/warehouse?list-type=2&prefix="+key+"/data/", nil, nil, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	require.Contains(t, body, key+"/data/a.bin")

	// A reader may not write, delete or upload.
	for _, m := range []string{"PUT", "DELETE"} {
		sign, _, body = alice.send(m, obj, nil, nil, false)
		require.Equal(t, 403, sign, "%s by a reader: %s", m, body)
	}
	sign, _, _ = alice.send("POST", obj+"?uploads", nil, nil, false)
	require.Equal(t, 403, sign)
	// Nobody gets a signature outside the table, nor for a table not granted.
	sibling := ep + "/warehouse/" + strings.Replace(key, "/ns/t", "/ns/t2", 1) + "/data/a.bin"
	for _, uri := range []string{sibling, ep + "/warehouse?list-type=2&prefix=" + strings.SplitN(key, "/", 2)[0] + "/",
		ep + "/other/" + key + "/data/a.bin", ep + "/warehouse/" + key + "/../t2/data/a.bin"} {
		sign, _, body = bob.send("GET", uri, nil, nil, false)
		require.Equal(t, 403, sign, "%s: %s", uri, body)
	}
	sign, _, _ = bob.send("PUT", obj+".copy", map[string][]string{"x-amz-copy-source": {"warehouse/" + strings.Replace(key, "/ns/t", "/ns/t2", 1) + "/x"}}, nil, false)
	require.Equal(t, 403, sign, "a copy from outside the table")
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t2/sign", map[string]any{"region": "us-east-1", "uri": sibling, "method": "GET",
		"headers": map[string]any{}}, "X-Test-Principal", "builtin:bob")
	require.Contains(t, []int{403, 404}, r.status, "bob holds no grant on t2: %s", r.body)
	sign, _, _ = signer{t, b, "builtin:carol"}.send("GET", obj, nil, nil, false)
	require.Contains(t, []int{403, 404}, sign, "a caller without grants")

	// The signature binds the key: replayed on another object, S3 refuses.
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/sign", map[string]any{"region": "us-east-1", "uri": obj, "method": "GET",
		"headers": map[string]any{}}, "X-Test-Principal", "builtin:bob")
	require.Equal(t, 200, r.status)
	require.Equal(t, "private", r.header.Get("Cache-Control"), "a signed read may be reused")
	var signed struct {
		Headers map[string][]string `json:"headers"`
	}
	require.NoError(t, json.Unmarshal(r.body, &signed))
	replay, err := http.NewRequest("GET", strings.Replace(obj, "a.bin", "b.bin", 1), nil)
	require.NoError(t, err)
	for k, vs := range signed.Headers {
		if !strings.EqualFold(k, "Host") {
			replay.Header[k] = vs
		}
	}
	resp, err := http.DefaultClient.Do(replay)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 403, resp.StatusCode, "SeaweedFS must check the signature")

	// Multipart upload, then a batch delete signed with its body.
	big := ep + "/warehouse/" + key + "/data/big.bin"
	sign, s3status, body = bob.send("POST", big+"?uploads", nil, nil, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	var created struct {
		UploadID string `xml:"UploadId"`
	}
	require.NoError(t, xml.Unmarshal([]byte(body), &created))
	part := bytes.Repeat([]byte("x"), 1024)
	sign, s3status, body = bob.send("PUT", fmt.Sprintf("%s?partNumber=1&uploadId=%s", big, created.UploadID), nil, part, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	complete := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"%x"</ETag></Part></CompleteMultipartUpload>`, md5.Sum(part))
	sign, s3status, body = bob.send("POST", fmt.Sprintf("%s?uploadId=%s", big, created.UploadID), nil, []byte(complete), false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	sign, s3status, body = alice.send("HEAD", big, nil, nil, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)

	del := fmt.Sprintf(`<Delete><Object><Key>%s/data/a.bin</Key></Object><Object><Key>%s/data/big.bin</Key></Object></Delete>`, key, key)
	sum := md5.Sum([]byte(del))
	md := map[string][]string{"Content-MD5": {base64.StdEncoding.EncodeToString(sum[:])}, "Content-Type": {"application/xml"}}
	sign, _, _ = bob.send("POST", ep+"/warehouse?delete", md, []byte(del), false)
	require.Equal(t, 403, sign, "a batch delete is signed only with its body")
	sign, s3status, body = bob.send("POST", ep+"/warehouse?delete", md, []byte(del), true)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	for _, o := range []string{obj, big} {
		_, s3status, _ = alice.send("HEAD", o, nil, nil, false)
		require.Equal(t, 404, s3status, "%s was deleted", o)
	}

	// Every answer is audited, refusals with their status.
	audit.Flush(context.Background())
	r = b.do(t, "GET", "/management/v1/audit?action="+service.ActionSignRequest+"&pageSize=1000", nil, "X-Test-Principal", "local")
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"op=PutObject access=read-write"`)
	require.Contains(t, string(r.body), `"status":403`)
}

// TestSigningOrVending: which of the two a load answers. A warehouse that
// can vend (STS) and sign gives credentials to clients asking for them
// and signing properties to clients asking for signing alone; the table
// property s3.remote-signing-enabled makes the table sign even for the
// former, and also opts a table in where the warehouse does not sign.
func TestSigningOrVending(t *testing.T) {
	b, ep, _ := signingSetup(t)
	local := func(method, path string, body any, headers ...string) response {
		return b.do(t, method, path, body, append([]string{"X-Test-Principal", "local"}, headers...)...)
	}
	profile := func(signing bool) {
		r := local("PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
			"endpoint": ep, "path-style-access": true, "sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
			"remote-signing-enabled": signing, "access-key-id": "catalog", "secret-access-key": catalogSecret})
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	mode := func(header string) string {
		t.Helper()
		r := local("GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Iceberg-Access-Delegation", header)
		require.Equal(t, 200, r.status, "%s", r.body)
		var res struct {
			Config map[string]string `json:"config"`
			Creds  []struct {
				Config map[string]string `json:"config"`
			} `json:"storage-credentials"`
			SigningConfig json.RawMessage `json:"remote-signing-config"`
		}
		require.NoError(t, json.Unmarshal(r.body, &res))
		switch {
		case res.Config["s3.remote-signing-enabled"] == "true":
			require.Empty(t, res.Creds)
			require.NotContains(t, res.Config, "s3.access-key-id")
			requireSigningShapes(t, r.body)
			return "sign"
		case len(res.Creds) == 1 && res.Creds[0].Config["s3.access-key-id"] != "":
			require.Nil(t, res.SigningConfig, "no remote-signing-config without signing")
			return "vend"
		}
		require.Nil(t, res.SigningConfig, "no remote-signing-config without signing")
		return "none"
	}
	setProp := func(v string) {
		r := local("POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{},
			"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{service.TablePropertyRemoteSigning: v}}}})
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	getObj := func() int {
		r := local("GET", "/v1/wh/namespaces/ns/tables/t", nil)
		var res struct {
			Metadata struct {
				Location string `json:"location"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(r.body, &res))
		uri := ep + "/warehouse/" + strings.TrimPrefix(res.Metadata.Location, "s3://warehouse/") + "/metadata/x.json"
		return local("POST", "/v1/wh/namespaces/ns/tables/t/sign", map[string]any{"region": "us-east-1", "uri": uri,
			"method": "GET", "headers": map[string]any{}}).status
	}

	profile(true)
	require.Equal(t, "vend", mode("vended-credentials"))
	require.Equal(t, "sign", mode("remote-signing"))
	require.Equal(t, "vend", mode("vended-credentials,remote-signing"))
	require.Equal(t, "none", mode(""))
	setProp("true")
	require.Equal(t, "sign", mode("vended-credentials"), "the table prefers signing")
	require.Equal(t, 200, getObj())

	profile(false)
	require.Equal(t, "sign", mode("vended-credentials"), "the table opts in where the warehouse does not sign")
	require.Equal(t, 200, getObj())
	setProp("false")
	require.Equal(t, "vend", mode("vended-credentials"))
	require.Equal(t, "vend", mode("remote-signing"), "nothing signs here: the client gets what the catalog can give")
	require.Equal(t, 403, getObj(), "neither the warehouse nor the table signs")
}
