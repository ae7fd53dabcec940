package credentials_test

import (
	"encoding/xml"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
)

var (
	signEP    = credentials.S3Endpoint{Host: "s3.local:8333", Region: "us-east-1"}
	signTable = credentials.Location{Scheme: "s3", Bucket: "warehouse", Prefix: "wh/ns/t"}
)

const base = "http://s3.local:8333/warehouse/wh/ns/t"

func signReq(method, uri string, headers map[string][]string, body *string) credentials.S3SignRequest {
	return credentials.S3SignRequest{Region: "us-east-1", URI: uri, Method: method, Headers: headers, Body: body}
}

func strp(s string) *string { return &s }

// judge runs the whole policy: parse, then check at level. It returns ""
// when the request would be signed, else "403" or "400".
func judge(r credentials.S3SignRequest, level credentials.AccessLevel) (credentials.S3Op, string) {
	op, err := credentials.ParseS3Request(r, signEP)
	if err == nil {
		err = credentials.CheckS3Op(op, signTable, level)
	}
	var ref *credentials.SignRefusal
	switch {
	case err == nil:
		return op, ""
	case errors.As(err, &ref) && ref.Forbidden:
		return op, "403"
	case errors.As(err, &ref):
		return op, "400"
	}
	return op, "error: " + err.Error()
}

func TestSignPolicyAllows(t *testing.T) {
	rw, ro := credentials.AccessReadWrite, credentials.AccessRead
	for _, c := range []struct {
		name   string
		r      credentials.S3SignRequest
		level  credentials.AccessLevel
		op     string
		write  bool
		hashed string
	}{
		{"get", signReq("GET", base+"/data/a.parquet", nil, nil), ro, "GetObject", false, "UNSIGNED-PAYLOAD"},
		{"head", signReq("HEAD", base+"/metadata/v1.json", nil, nil), ro, "HeadObject", false, "UNSIGNED-PAYLOAD"},
		{"ranged get with version", signReq("GET", base+"/data/a.parquet?versionId=3", map[string][]string{"Range": {"bytes=0-9"}}, nil), ro, "GetObject", false, "UNSIGNED-PAYLOAD"},
		{"encoded key", signReq("GET", base+"/data/id%3D5/a%20b.parquet", nil, nil), ro, "GetObject", false, "UNSIGNED-PAYLOAD"},
		{"virtual host", signReq("GET", "http://warehouse.s3.local:8333/wh/ns/t/data/a.parquet", nil, nil), ro, "GetObject", false, "UNSIGNED-PAYLOAD"},
		{"list inside", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&prefix=wh%2Fns%2Ft%2Fdata%2F", nil, nil), ro, "ListObjectsV2", false, "UNSIGNED-PAYLOAD"},
		{"list v1 with delimiter", signReq("GET", "http://s3.local:8333/warehouse/?prefix=wh/ns/t/&delimiter=/", nil, nil), ro, "ListObjects", false, "UNSIGNED-PAYLOAD"},
		{"put", signReq("PUT", base+"/data/b.parquet", map[string][]string{"Content-Type": {"application/octet-stream"}}, nil), rw, "PutObject", true, "UNSIGNED-PAYLOAD"},
		{"put with hash", signReq("PUT", base+"/data/b.parquet", map[string][]string{"X-Amz-Content-SHA256": {"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"}}, nil), rw, "PutObject", true, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"put streaming trailer", signReq("PUT", base+"/data/b.parquet", map[string][]string{"x-amz-content-sha256": {"STREAMING-UNSIGNED-PAYLOAD-TRAILER"}}, nil), rw, "PutObject", true, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
		{"create multipart", signReq("POST", base+"/data/big.parquet?uploads", nil, nil), rw, "CreateMultipartUpload", true, "UNSIGNED-PAYLOAD"},
		{"upload part", signReq("PUT", base+"/data/big.parquet?partNumber=2&uploadId=abc", nil, nil), rw, "UploadPart", true, "UNSIGNED-PAYLOAD"},
		{"complete multipart", signReq("POST", base+"/data/big.parquet?uploadId=abc", nil, nil), rw, "CompleteMultipartUpload", true, "UNSIGNED-PAYLOAD"},
		{"abort multipart", signReq("DELETE", base+"/data/big.parquet?uploadId=abc", nil, nil), rw, "AbortMultipartUpload", true, "UNSIGNED-PAYLOAD"},
		{"delete", signReq("DELETE", base+"/data/a.parquet", nil, nil), rw, "DeleteObject", true, "UNSIGNED-PAYLOAD"},
		{"copy inside", signReq("PUT", base+"/data/c.parquet", map[string][]string{"x-amz-copy-source": {"/warehouse/wh/ns/t/data/a.parquet"}}, nil), rw, "PutObjectCopy", true, "UNSIGNED-PAYLOAD"},
		{"batch delete", signReq("POST", "http://s3.local:8333/warehouse?delete", map[string][]string{"Content-MD5": {"x"}},
			strp(`<Delete><Object><Key>wh/ns/t/data/a.parquet</Key></Object><Object><Key>wh/ns/t/metadata/v1.json</Key></Object></Delete>`)), rw, "DeleteObjects", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			op, verdict := judge(c.r, c.level)
			require.Empty(t, verdict)
			require.Equal(t, c.op, op.Name)
			require.Equal(t, c.write, op.Write)
			require.Equal(t, "warehouse", op.Bucket)
			if c.hashed != "" {
				require.Equal(t, c.hashed, op.PayloadHash)
			} else {
				require.Len(t, op.PayloadHash, 64, "a body is bound by its own hash")
			}
		})
	}
}

// TestSignPolicyRefuses is the hostile corpus: every request here must be
// refused, whatever the caller's access.
func TestSignPolicyRefuses(t *testing.T) {
	rw, ro := credentials.AccessReadWrite, credentials.AccessRead
	for _, c := range []struct {
		name    string
		r       credentials.S3SignRequest
		level   credentials.AccessLevel
		verdict string
	}{
		{"other bucket", signReq("GET", "http://s3.local:8333/other/wh/ns/t/data/a.parquet", nil, nil), rw, "403"},
		{"other bucket virtual", signReq("GET", "http://other.s3.local:8333/wh/ns/t/data/a.parquet", nil, nil), rw, "403"},
		{"other host", signReq("GET", "http://evil.example:8333/warehouse/wh/ns/t/data/a.parquet", nil, nil), rw, "403"},
		{"host suffix trick", signReq("GET", "http://s3.local.evil.example:8333/warehouse/wh/ns/t/a", nil, nil), rw, "403"},
		{"port suffix trick", signReq("GET", "http://s3.local:8333.evil.example/warehouse/wh/ns/t/a", nil, nil), rw, "400"},
		{"other port", signReq("GET", "http://s3.local:9000/warehouse/wh/ns/t/a", nil, nil), rw, "403"},
		{"sibling table", signReq("GET", "http://s3.local:8333/warehouse/wh/ns/t2/data/a.parquet", nil, nil), rw, "403"},
		{"table dir itself", signReq("PUT", base+"/", nil, nil), rw, "403"},
		{"dot dot", signReq("GET", base+"/../t2/data/a.parquet", nil, nil), rw, "403"},
		{"encoded dot dot", signReq("GET", base+"/%2e%2e/t2/data/a.parquet", nil, nil), rw, "403"},
		{"dot", signReq("GET", base+"/./data/a.parquet", nil, nil), rw, "403"},
		{"encoded slash", signReq("GET", base+"%2F..%2Ft2/data/a.parquet", nil, nil), rw, "403"},
		{"encoded slash lower", signReq("GET", "http://s3.local:8333/warehouse/wh%2fns%2ft/data/a", nil, nil), rw, "403"},
		{"backslash", signReq("GET", base+"/data%5C..%5Cx", nil, nil), rw, "403"},
		{"double slash", signReq("GET", base+"//data/a.parquet", nil, nil), rw, "403"},
		{"control char", signReq("GET", base+"/data/a%0Ab", nil, nil), rw, "403"},
		{"encoded bucket", signReq("GET", "http://s3.local:8333/ware%68ouse/wh/ns/t/a", nil, nil), rw, "403"},
		{"list warehouse root", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&prefix=wh%2F", nil, nil), rw, "403"},
		{"list without prefix", signReq("GET", "http://s3.local:8333/warehouse?list-type=2", nil, nil), rw, "403"},
		{"list sibling prefix", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&prefix=wh%2Fns%2Ft", nil, nil), rw, "403"},
		{"list other bucket", signReq("GET", "http://s3.local:8333/other?list-type=2&prefix=wh%2Fns%2Ft%2F", nil, nil), rw, "403"},
		{"list buckets", signReq("GET", "http://s3.local:8333/", nil, nil), rw, "403"},
		{"copy from outside", signReq("PUT", base+"/data/c.parquet", map[string][]string{"X-Amz-Copy-Source": {"warehouse/wh/ns/t2/data/a.parquet"}}, nil), rw, "403"},
		{"copy from other bucket", signReq("PUT", base+"/data/c.parquet", map[string][]string{"x-amz-copy-source": {"other/wh/ns/t/data/a.parquet"}}, nil), rw, "403"},
		{"copy source dot dot", signReq("PUT", base+"/data/c.parquet", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/../t2/a"}}, nil), rw, "403"},
		{"upload part copy outside", signReq("PUT", base+"/data/c.parquet?partNumber=1&uploadId=u", map[string][]string{"x-amz-copy-source": {"warehouse/wh/other/a"}}, nil), rw, "403"},
		{"batch delete outside", signReq("POST", "http://s3.local:8333/warehouse?delete", nil,
			strp(`<Delete><Object><Key>wh/ns/t/data/a.parquet</Key></Object><Object><Key>wh/ns/t2/x</Key></Object></Delete>`)), rw, "403"},
		{"batch delete dot dot", signReq("POST", "http://s3.local:8333/warehouse?delete", nil,
			strp(`<Delete><Object><Key>wh/ns/t/../t2/x</Key></Object></Delete>`)), rw, "403"},
		{"batch delete without body", signReq("POST", "http://s3.local:8333/warehouse?delete", nil, nil), rw, "403"},
		{"batch delete junk body", signReq("POST", "http://s3.local:8333/warehouse?delete", nil, strp("<nope/>")), rw, "400"},
		{"presign query", signReq("GET", base+"/data/a.parquet?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=604800", nil, nil), rw, "403"},
		{"presign of another table", signReq("GET", "http://s3.local:8333/warehouse/wh/ns/t2/a?X-Amz-Expires=604800", nil, nil), rw, "403"},
		{"acl", signReq("PUT", base+"/data/a.parquet?acl", nil, nil), rw, "403"},
		{"get acl", signReq("GET", base+"/data/a.parquet?acl", nil, nil), rw, "403"},
		{"tagging", signReq("PUT", base+"/data/a.parquet?tagging", nil, nil), rw, "403"},
		{"bucket policy", signReq("PUT", "http://s3.local:8333/warehouse?policy", nil, nil), rw, "403"},
		{"delete bucket", signReq("DELETE", "http://s3.local:8333/warehouse", nil, nil), rw, "403"},
		{"post object", signReq("POST", base+"/data/a.parquet", nil, nil), rw, "403"},
		{"patch", signReq("PATCH", base+"/data/a.parquet", nil, nil), rw, "403"},
		{"read-only put", signReq("PUT", base+"/data/b.parquet", nil, nil), ro, "403"},
		{"read-only delete", signReq("DELETE", base+"/data/a.parquet", nil, nil), ro, "403"},
		{"read-only multipart", signReq("POST", base+"/data/b.parquet?uploads", nil, nil), ro, "403"},
		{"read-only batch delete", signReq("POST", "http://s3.local:8333/warehouse?delete", nil,
			strp(`<Delete><Object><Key>wh/ns/t/data/a.parquet</Key></Object></Delete>`)), ro, "403"},
		{"other region", credentials.S3SignRequest{Region: "eu-west-1", URI: base + "/data/a", Method: "GET"}, rw, "403"},
		{"chunk-signed payload", signReq("PUT", base+"/data/b.parquet", map[string][]string{"x-amz-content-sha256": {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}}, nil), rw, "400"},
		{"not a url", signReq("GET", "::nope", nil, nil), rw, "400"},
		{"userinfo", signReq("GET", "http://a:b@s3.local:8333/warehouse/wh/ns/t/a", nil, nil), rw, "400"},
		{"other scheme", signReq("GET", "file:///warehouse/wh/ns/t/a", nil, nil), rw, "400"},
		// Requests a store could read another way than the catalog did.
		{"copy source twice", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/a", "warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"copy source in two cases", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/a"}, "X-Amz-Copy-Source": {"warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"copy source joined by comma", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/a,warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"copy source with extra query", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/a?versionId=1&x=2"}}, nil), rw, "400"},
		{"copy source version twice", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/a?versionId=1&versionId=2"}}, nil), rw, "400"},
		{"header without value", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source": {}}, nil), rw, "400"},
		{"hash header in two cases", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-content-sha256": {"UNSIGNED-PAYLOAD"}, "X-Amz-Content-Sha256": {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}}, nil), rw, "400"},
		{"any header twice", signReq("GET", base+"/data/a", map[string][]string{"Range": {"bytes=0-1", "bytes=2-3"}}, nil), rw, "400"},
		{"header name not a token", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-source ": {"warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"header name folding to copy source", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-copy-\u017fource": {"warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"header value with newline", signReq("PUT", base+"/data/c", map[string][]string{"x-amz-meta-a": {"b\r\nx-amz-copy-source: warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"copy source on a get", signReq("GET", base+"/data/a", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t2/a"}}, nil), rw, "400"},
		{"forwarded host", signReq("GET", base+"/data/a", map[string][]string{"X-Forwarded-Host": {"other.s3.local:8333"}}, nil), rw, "403"},
		{"original url", signReq("GET", base+"/data/a", map[string][]string{"X-Original-URL": {"/warehouse/wh/ns/t2/a"}}, nil), rw, "403"},
		{"method override", signReq("GET", base+"/data/a", map[string][]string{"X-HTTP-Method-Override": {"DELETE"}}, nil), rw, "403"},
		{"prefix twice", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&prefix=wh%2Fns%2Ft%2F&prefix=wh%2Fns%2Ft2%2F", nil, nil), rw, "400"},
		{"prefix twice, one encoded", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&prefix=wh%2Fns%2Ft%2F&pre%66ix=wh%2F", nil, nil), rw, "400"},
		{"list type twice", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&list-type=1&prefix=wh%2Fns%2Ft%2F", nil, nil), rw, "400"},
		{"version twice", signReq("GET", base+"/data/a?versionId=1&versionId=2", nil, nil), rw, "400"},
		{"raw plus in query", signReq("GET", "http://s3.local:8333/warehouse?list-type=2&prefix=wh%2Fns%2Ft%2F+x", nil, nil), rw, "400"},
		{"semicolon in query", signReq("GET", "http://s3.local:8333/warehouse?list-type=2;prefix=wh%2F&prefix=wh%2Fns%2Ft%2F", nil, nil), rw, "400"},
		{"batch delete two keys in one object", signReq("POST", "http://s3.local:8333/warehouse?delete", nil,
			strp(`<Delete><Object><Key>wh/ns/t/data/a</Key><Key>wh/ns/t2/a</Key></Object></Delete>`)), rw, "400"},
		{"batch delete namespaced key", signReq("POST", "http://s3.local:8333/warehouse?delete", nil,
			strp(`<Delete xmlns:s="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>wh/ns/t/data/a</Key><s:Key>wh/ns/t2/a</s:Key></Object></Delete>`)), rw, "400"},
		{"batch delete unknown element", signReq("POST", "http://s3.local:8333/warehouse?delete", nil,
			strp(`<Delete><Object><Key>wh/ns/t/data/a</Key><Other>wh/ns/t2/a</Other></Object></Delete>`)), rw, "400"},
		{"method case-mapped from unicode", signReq("po\u017ft", base+"/data/a", nil, nil), rw, "400"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, verdict := judge(c.r, c.level)
			require.Equal(t, c.verdict, verdict)
		})
	}
}

// TestSignPolicyHosts: a host is matched in ASCII only (Unicode would
// read the Kelvin sign as k), and a path-style endpoint takes no
// virtual-hosted request, which a store without virtual hosts would read
// as path-style, in the bucket named by the path.
func TestSignPolicyHosts(t *testing.T) {
	for _, c := range []struct {
		ep      credentials.S3Endpoint
		uri     string
		verdict string
	}{
		{credentials.S3Endpoint{Host: "k.local:8333", Region: "us-east-1"}, "http://K.LOCAL:8333/warehouse/wh/ns/t/a", ""},
		{credentials.S3Endpoint{Host: "k.local:8333", Region: "us-east-1"}, "http://\u212a.local:8333/warehouse/wh/ns/t/a", "400"},
		{credentials.S3Endpoint{Host: "s3.local:8333", Region: "us-east-1", PathStyle: true}, "http://s3.local:8333/warehouse/wh/ns/t/a", ""},
		{credentials.S3Endpoint{Host: "s3.local:8333", Region: "us-east-1", PathStyle: true}, "http://warehouse.s3.local:8333/wh/ns/t/a", "403"},
		{credentials.S3Endpoint{Host: "s3.local:8333", Region: "us-east-1"}, "http://warehouse.s3.local:8333/wh/ns/t/a", ""},
	} {
		op, err := credentials.ParseS3Request(signReq("GET", c.uri, nil, nil), c.ep)
		if err == nil {
			err = credentials.CheckS3Op(op, signTable, credentials.AccessRead)
		}
		verdict := ""
		var ref *credentials.SignRefusal
		if errors.As(err, &ref) {
			verdict = map[bool]string{true: "403", false: "400"}[ref.Forbidden]
		} else if err != nil {
			verdict = err.Error()
		}
		require.Equal(t, c.verdict, verdict, "%s", c.uri)
	}
}

// TestSignPolicyCanonical: what is signed is the request re-serialized
// from the values checked, encoded as SigV4 canonicalizes them; a request
// already in that form comes back unchanged.
func TestSignPolicyCanonical(t *testing.T) {
	for _, c := range []struct {
		r       credentials.S3SignRequest
		uri     string
		headers map[string]string
	}{
		{signReq("get", base+"/data/id%3d5/a%20b!.parquet?versionId=a+b", nil, nil), "", nil},
		{signReq("get", base+"/data/id%3d5/a%20b!.parquet?versionId=a%2Bb", nil, nil), base + "/data/id%3D5/a%20b%21.parquet?versionId=a%2Bb", nil},
		{signReq("GET", "HTTP://S3.Local:8333/warehouse/?list-type=2&prefix=wh/ns/t/data/&delimiter=%2F", nil, nil),
			"http://s3.local:8333/warehouse/?list-type=2&prefix=wh%2Fns%2Ft%2Fdata%2F&delimiter=%2F", nil},
		{signReq("POST", base+"/data/big?uploads", nil, nil), base + "/data/big?uploads", nil},
		{signReq("GET", "http://warehouse.s3.local:8333/wh/ns/t/a~b", nil, nil), "http://warehouse.s3.local:8333/wh/ns/t/a~b", nil},
		{signReq("PUT", base+"/data/c", map[string][]string{"X-Amz-Copy-Source": {" /warehouse/wh/ns/t/data/a b+c.parquet?versionId=v%201 "}, "Content-Type": {"x"}}, nil),
			base + "/data/c", map[string]string{"X-Amz-Copy-Source": "/warehouse/wh/ns/t/data/a%20b%2Bc.parquet?versionId=v%201", "Content-Type": "x"}},
		{signReq("PUT", base+"/data/c?partNumber=1&uploadId=u", map[string][]string{"x-amz-copy-source": {"warehouse/wh/ns/t/data/a%2Cb"}}, nil),
			base + "/data/c?partNumber=1&uploadId=u", map[string]string{"x-amz-copy-source": "warehouse/wh/ns/t/data/a%2Cb"}},
	} {
		op, err := credentials.ParseS3Request(c.r, signEP)
		if c.uri == "" {
			require.Error(t, err, "%s", c.r.URI)
			continue
		}
		require.NoError(t, err, "%s", c.r.URI)
		require.Equal(t, c.uri, op.URI)
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		require.Equal(t, c.headers, op.Headers)
		again, err := credentials.ParseS3Request(signReq(op.Method, op.URI, oneValue(op.Headers), c.r.Body), signEP)
		require.NoError(t, err)
		require.Equal(t, op, again, "re-serializing is stable")
	}
}

func oneValue(h map[string]string) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		out[k] = []string{v}
	}
	return out
}

// TestSignPolicyAWSHosts checks the URL forms of AWS itself, where the
// profile names no endpoint.
func TestSignPolicyAWSHosts(t *testing.T) {
	ep := credentials.S3Endpoint{Region: "eu-west-1"}
	for uri, ok := range map[string]bool{
		"https://s3.eu-west-1.amazonaws.com/warehouse/wh/ns/t/a":           true,
		"https://warehouse.s3.eu-west-1.amazonaws.com/wh/ns/t/a":           true,
		"https://warehouse.s3.dualstack.eu-west-1.amazonaws.com/wh/ns/t/a": true,
		"https://warehouse.s3.amazonaws.com/wh/ns/t/a":                     true,
		"https://warehouse.s3.us-east-1.amazonaws.com/wh/ns/t/a":           false,
		"https://warehouse.s3.eu-west-1.amazonaws.com.evil/wh/ns/t/a":      false,
		"https://s3.eu-west-1.amazonaws.com.evil/warehouse/wh/ns/t/a":      false,
	} {
		op, err := credentials.ParseS3Request(credentials.S3SignRequest{Region: "eu-west-1", URI: uri, Method: "GET"}, ep)
		if err == nil {
			err = credentials.CheckS3Op(op, signTable, credentials.AccessRead)
		}
		require.Equal(t, ok, err == nil, "%s: %v", uri, err)
	}
}

// FuzzSignPolicy checks that whatever the request, a signed one never
// names an object outside the table, never writes at read level, and is
// one request only: re-reading what is signed gives the same operation,
// its query and headers hold each name once, and a lax reader of the copy
// source or the DeleteObjects body finds no key the policy did not check.
func FuzzSignPolicy(f *testing.F) {
	for _, s := range []string{base + "/data/a", base + "/../x", base + "%2F..%2Fx", "http://s3.local:8333/warehouse?list-type=2&prefix=wh/ns/t/",
		"http://s3.local:8333/warehouse?list-type=2&prefix=wh/ns/t/&prefix=wh/"} {
		f.Add("GET", s, "", "", "")
		f.Add("PUT", s, "warehouse/wh/ns/t/a", "", "")
		f.Add("PUT", s, "warehouse/wh/ns/t/a", "warehouse/wh/ns/t2/a", "")
	}
	f.Add("POST", "http://s3.local:8333/warehouse?delete", "", "", "<Delete><Object><Key>wh/ns/t/a</Key></Object></Delete>")
	f.Add("POST", "http://s3.local:8333/warehouse?delete", "", "", "<Delete><Object><Key>wh/ns/t/a</Key><Key>wh/x</Key></Object></Delete>")
	f.Fuzz(func(t *testing.T, method, uri, copySrc, copySrc2, body string) {
		h := map[string][]string{}
		if copySrc != "" {
			h["x-amz-copy-source"] = []string{copySrc}
		}
		if copySrc2 != "" {
			h["X-Amz-Copy-Source"] = []string{copySrc2}
		}
		var b *string
		if body != "" {
			b = &body
		}
		for _, level := range []credentials.AccessLevel{credentials.AccessRead, credentials.AccessReadWrite} {
			op, verdict := judge(signReq(method, uri, h, b), level)
			if verdict != "" {
				continue
			}
			require.Equal(t, "warehouse", op.Bucket)
			for _, k := range op.Keys {
				requireInTable(t, k)
			}
			if level == credentials.AccessRead {
				require.False(t, op.Write, "a read-only caller got %s signed", op.Name)
			}
			again, err := credentials.ParseS3Request(signReq(op.Method, op.URI, oneValue(op.Headers), b), signEP)
			require.NoError(t, err, "the signed request does not parse again")
			require.Equal(t, op, again)
			u, err := url.Parse(op.URI)
			require.NoError(t, err)
			for k, vs := range u.Query() {
				require.Len(t, vs, 1, "query parameter %s", k)
			}
			if op.List != "" {
				requireInTable(t, u.Query().Get("prefix")+"x")
			}
			require.LessOrEqual(t, len(op.Headers), 1)
			for _, v := range op.Headers {
				require.NotContains(t, v, ",")
				src, _, _ := strings.Cut(strings.TrimPrefix(v, "/"), "?")
				src, err := url.PathUnescape(src)
				require.NoError(t, err)
				require.Contains(t, op.Keys, strings.TrimPrefix(src, "warehouse/"), "copy source %q", v)
			}
			if op.Name == "DeleteObjects" {
				var lax laxDelete
				require.NoError(t, xml.Unmarshal([]byte(body), &lax))
				for _, o := range lax.Objects {
					for _, k := range o.Keys {
						require.Contains(t, op.Keys, k)
					}
				}
			}
		}
	})
}

func requireInTable(t *testing.T, k string) {
	require.True(t, len(k) > len("wh/ns/t/") && k[:len("wh/ns/t/")] == "wh/ns/t/", "key %q escaped the table", k)
	for _, seg := range splitKey(k) {
		require.NotContains(t, []string{".", ".."}, seg, "key %q", k)
	}
}

func splitKey(k string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(k); i++ {
		if i == len(k) || k[i] == '/' {
			out = append(out, k[start:i])
			start = i + 1
		}
	}
	return out
}
