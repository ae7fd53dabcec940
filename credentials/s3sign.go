package credentials

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// S3SignRequest is an S3 request an engine asks the catalog to sign (the
// REST spec's RemoteSignRequest): the URI as the engine will send it, its
// method and headers, and the body where it names objects (DeleteObjects).
type S3SignRequest struct {
	Region  string
	URI     string
	Method  string
	Headers map[string][]string
	Body    *string
}

// S3Endpoint says which URLs reach a warehouse's object store: Host is
// the profile's endpoint host (with port), or "" for AWS itself, where
// s3.<region>.amazonaws.com and its virtual-hosted forms are accepted.
// PathStyle (with a Host) accepts path-style URLs only: a store that does
// not serve virtual hosts reads bucket.host/other/key as bucket "other".
type S3Endpoint struct {
	Host      string
	Region    string
	PathStyle bool
}

// S3Op is what a request to be signed does, as far as the catalog's
// policy cares: which bucket, which object keys (or the list prefix), and
// whether it needs write access.
type S3Op struct {
	Name   string // S3 operation, e.g. GetObject, ListObjectsV2
	Bucket string
	Keys   []string // objects read, written or deleted; copy sources too
	List   string   // prefix of a list, when the operation lists
	Write  bool
	// PayloadHash is the x-amz-content-sha256 value to sign with: the
	// body's hash when the request carried one, the engine's own value
	// when it is one the catalog can honour, else UNSIGNED-PAYLOAD.
	PayloadHash string
	// Method, URI and Headers are the request as checked, re-serialized
	// from the values the policy read (upper-case method; lower-case
	// host, path and query encoded as SigV4 does; one value per header,
	// keyed as the engine spelled it, the copy source rewritten): sign
	// these, never the engine's raw request.
	Method  string
	URI     string
	Headers map[string]string
}

// SignRefusal is why a request is not signed. Forbidden refusals (a
// request outside the table or beyond the caller's access) answer 403;
// the others are malformed requests (400). Msg is safe to show the caller.
type SignRefusal struct {
	Forbidden bool
	Msg       string
}

func (e *SignRefusal) Error() string { return e.Msg }

func refuse(format string, args ...any) error {
	return &SignRefusal{Forbidden: true, Msg: fmt.Sprintf(format, args...)}
}

func malformed(format string, args ...any) error {
	return &SignRefusal{Msg: fmt.Sprintf(format, args...)}
}

// unsignedPayload is the payload hash of a request whose body S3 does not
// check against the signature.
const unsignedPayload = "UNSIGNED-PAYLOAD"

// ParseS3Request works out what r does on the store ep names. It fails
// with a SignRefusal when the URI is not a request to that store, when its
// path could be read two ways (dot segments, encoded slashes, empty
// segments), when a header or query parameter the store could read two
// ways is given twice, or when the operation is one the catalog never
// signs (bucket configuration, ACLs, anything but object reads, writes,
// deletes, multipart uploads and listing).
func ParseS3Request(r S3SignRequest, ep S3Endpoint) (S3Op, error) {
	if r.Region != ep.Region {
		return S3Op{}, refuse("The request is for region %q; this warehouse's storage is in %q", r.Region, ep.Region)
	}
	method, ok := asciiUpper(r.Method)
	if !ok {
		return S3Op{}, malformed("The request method is not an HTTP method")
	}
	u, err := url.Parse(r.URI)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return S3Op{}, malformed("The request URI is not an http(s) URL of an S3 request")
	}
	host, ok := asciiLower(u.Host)
	if !ok {
		return S3Op{}, malformed("The request URI's host is not ASCII")
	}
	bucket, rawPath, virtual, err := splitS3URL(host, u.EscapedPath(), ep)
	if err != nil {
		return S3Op{}, err
	}
	key, err := objectKey(rawPath)
	if err != nil {
		return S3Op{}, err
	}
	params, query, err := parseQuery(u.RawQuery)
	if err != nil {
		return S3Op{}, err
	}
	headers, err := checkHeaders(r.Headers)
	if err != nil {
		return S3Op{}, err
	}
	op := S3Op{Bucket: bucket, PayloadHash: unsignedPayload, Method: method}
	if key == "" {
		err = bucketOp(&op, r.Body, query)
	} else {
		err = objectOp(&op, headers, key, query)
	}
	if err != nil {
		return S3Op{}, err
	}
	if _, ok := headers["x-amz-copy-source"]; ok && !strings.HasSuffix(op.Name, "Copy") {
		return S3Op{}, malformed("The request carries x-amz-copy-source but is no copy")
	}
	if err := payloadHash(&op, r.Body, headers); err != nil {
		return S3Op{}, err
	}
	op.URI = canonicalURI(u.Scheme, host, bucket, key, virtual, strings.HasSuffix(u.EscapedPath(), "/"), params)
	op.Headers = make(map[string]string, len(headers))
	for _, h := range headers {
		op.Headers[h.Name] = h.Value
	}
	return op, nil
}

// canonicalURI writes the checked request's URI back: the key and the
// query encoded as SigV4 canonicalizes them, so that what the engine is
// told to send is what the signature covers. A bucket-level path keeps
// its trailing slash, as engines send it.
func canonicalURI(scheme, host, bucket, key string, virtual, slash bool, params []queryParam) string {
	path := "/"
	if !virtual {
		path += bucket
		if key != "" || slash {
			path += "/"
		}
	}
	path += awsEscape(key, true)
	if len(params) == 0 {
		return scheme + "://" + host + path
	}
	return scheme + "://" + host + path + "?" + encodeQuery(params)
}

// asciiUpper upper-cases an HTTP method, which must be ASCII letters
// (Unicode case mapping would turn "poſt" into POST).
func asciiUpper(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case 'A' <= c && c <= 'Z':
		default:
			return "", false
		}
	}
	return string(b), true
}

// asciiLower lower-cases a host, which must be ASCII: strings.ToLower
// would read the Kelvin sign as "k".
func asciiLower(s string) (string, bool) {
	b := []byte(s)
	for i, c := range b {
		if c >= 0x80 {
			return "", false
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b), true
}

// splitS3URL returns the bucket and the escaped key path of a path-style
// or virtual-hosted URL on ep, and whether it was virtual-hosted.
func splitS3URL(host, path string, ep S3Endpoint) (string, string, bool, error) {
	path = strings.TrimPrefix(path, "/")
	pathStyle := func() (string, string, bool, error) {
		bucket, rest, _ := strings.Cut(path, "/")
		if bucket == "" {
			return "", "", false, refuse("The request names no bucket")
		}
		b, err := url.PathUnescape(bucket)
		if err != nil || b != bucket {
			return "", "", false, refuse("The bucket name in the request is encoded")
		}
		return bucket, rest, false, nil
	}
	if ep.Host != "" {
		want := strings.ToLower(ep.Host)
		if host == want {
			return pathStyle()
		}
		if b, ok := strings.CutSuffix(host, "."+want); ok && b != "" {
			if ep.PathStyle {
				return "", "", false, refuse("This warehouse's storage takes path-style requests only")
			}
			return b, path, true, nil
		}
		return "", "", false, refuse("The request is not for this warehouse's S3 endpoint")
	}
	for _, h := range []string{"s3." + ep.Region + ".amazonaws.com", "s3.dualstack." + ep.Region + ".amazonaws.com", "s3.amazonaws.com"} {
		if host == h {
			return pathStyle()
		}
		if b, ok := strings.CutSuffix(host, "."+h); ok && b != "" {
			return b, path, true, nil
		}
	}
	return "", "", false, refuse("The request is not for S3 in region %s", ep.Region)
}

// objectKey decodes an escaped key path, refusing every form a store or a
// proxy might read as another key: dot segments, empty segments inside
// the key, encoded slashes and backslashes, and control characters.
func objectKey(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	segs := strings.Split(raw, "/")
	out := make([]string, len(segs))
	for i, s := range segs {
		lower := strings.ToLower(s)
		if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(s, `\`) {
			return "", refuse("The object key contains an encoded slash or a backslash")
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", malformed("The object key is not validly percent-encoded")
		}
		if d == "." || d == ".." {
			return "", refuse("The object key contains a dot segment")
		}
		if d == "" && i != len(segs)-1 {
			return "", refuse("The object key contains an empty segment")
		}
		for _, c := range d {
			if c < 0x20 || c == 0x7f {
				return "", refuse("The object key contains a control character")
			}
		}
		out[i] = d
	}
	return strings.Join(out, "/"), nil
}

// Query parameters each kind of request may carry; anything else (acl,
// tagging, policy, versioning, ...) is a sub-resource the catalog does
// not sign.
var (
	readParams = set("versionId", "partNumber", "x-id", "response-content-type", "response-content-disposition",
		"response-cache-control", "response-content-encoding", "response-content-language", "response-expires")
	listParams = set("list-type", "prefix", "delimiter", "continuation-token", "start-after", "max-keys",
		"encoding-type", "fetch-owner", "marker", "x-id")
	putParams      = set("x-id")
	partParams     = set("partNumber", "uploadId", "x-id")
	uploadsParams  = set("uploads", "x-id")
	completeParams = set("uploadId", "x-id")
	deleteParams   = set("versionId", "x-id")
	abortParams    = set("uploadId", "x-id")
	batchParams    = set("delete", "x-id")
)

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// only reports whether every parameter of q is in allowed.
func only(q url.Values, allowed map[string]bool) bool {
	for k := range q {
		if !allowed[k] {
			return false
		}
	}
	return true
}

func objectOp(op *S3Op, h map[string]checkedHeader, key string, q url.Values) error {
	op.Keys = []string{key}
	has := func(k string) bool { _, ok := q[k]; return ok }
	switch op.Method {
	case "GET", "HEAD":
		if has("uploadId") && only(q, set("uploadId", "max-parts", "part-number-marker", "x-id")) {
			op.Name, op.Write = "ListParts", true
			return nil
		}
		if only(q, readParams) {
			op.Name = "GetObject"
			if op.Method == "HEAD" {
				op.Name = "HeadObject"
			}
			return nil
		}
	case "PUT":
		op.Write = true
		ok := false
		if has("uploadId") {
			op.Name, ok = "UploadPart", has("partNumber") && only(q, partParams)
		} else {
			op.Name, ok = "PutObject", only(q, putParams)
		}
		if !ok {
			break
		}
		if src, ok := h["x-amz-copy-source"]; ok {
			v, err := copySource(op, src.Value)
			h["x-amz-copy-source"] = checkedHeader{Name: src.Name, Value: v}
			return err
		}
		return nil
	case "POST":
		op.Write = true
		if has("uploads") && only(q, uploadsParams) {
			op.Name = "CreateMultipartUpload"
			return nil
		}
		if has("uploadId") && only(q, completeParams) {
			op.Name = "CompleteMultipartUpload"
			return nil
		}
	case "DELETE":
		op.Write = true
		if has("uploadId") && only(q, abortParams) {
			op.Name = "AbortMultipartUpload"
			return nil
		}
		if only(q, deleteParams) {
			op.Name = "DeleteObject"
			return nil
		}
	default:
		return refuse("The catalog does not sign %s requests", op.Method)
	}
	return refuse("The catalog does not sign this %s request on an object (query %s)", op.Method, paramNames(q))
}

// copySource adds the source of a copy to op's keys and returns the
// header's value rewritten from what was checked. The source is
// "bucket/key" or "/bucket/key", URL-encoded, with an optional
// ?versionId; a copy reads its source, so it must lie inside the table as
// well. A raw comma is refused: two x-amz-copy-source headers sign as one
// joined by a comma, so "a,b" could be sent as a and b.
func copySource(op *S3Op, src string) (string, error) {
	if strings.Contains(src, ",") {
		return "", malformed("The copy source contains a raw comma; encode it as %%2C")
	}
	lead := ""
	if strings.HasPrefix(src, "/") {
		src, lead = src[1:], "/"
	}
	path, rawQuery, hasQuery := strings.Cut(src, "?")
	bucket, rawKey, ok := strings.Cut(path, "/")
	if !ok || bucket == "" || rawKey == "" {
		return "", refuse("The copy source names no object")
	}
	key, err := objectKey(rawKey)
	if err != nil {
		return "", err
	}
	if bucket != op.Bucket {
		return "", refuse("The copy source is in another bucket")
	}
	out := lead + bucket + "/" + awsEscape(key, true)
	if hasQuery {
		params, q, err := parseQuery(rawQuery)
		if err != nil || len(params) != 1 || q.Get("versionId") == "" {
			return "", malformed("The copy source may carry one versionId and nothing else after '?'")
		}
		out += "?" + encodeQuery(params)
	}
	op.Name += "Copy"
	op.Keys = append(op.Keys, key)
	return out, nil
}

func bucketOp(op *S3Op, body *string, q url.Values) error {
	switch op.Method {
	case "GET":
		if _, ok := q["location"]; ok && len(q) == 1 {
			op.Name = "GetBucketLocation"
			return nil
		}
		if only(q, listParams) {
			op.Name = "ListObjects"
			if q.Get("list-type") == "2" {
				op.Name = "ListObjectsV2"
			}
			op.List = q.Get("prefix")
			if op.List == "" {
				return refuse("The catalog signs only lists with a prefix inside the table")
			}
			return nil
		}
	case "POST":
		if _, ok := q["delete"]; ok && only(q, batchParams) {
			op.Name, op.Write = "DeleteObjects", true
			return batchKeys(op, body)
		}
	}
	return refuse("The catalog does not sign this %s request on a bucket (query %s)", op.Method, paramNames(q))
}

// batchKeys reads the keys of a DeleteObjects body, which must come with
// the request: the signature then binds that very body (payloadHash).
func batchKeys(op *S3Op, body *string) error {
	if body == nil || *body == "" {
		return refuse("A DeleteObjects request is signed only with its body, which names the objects")
	}
	batch, err := ParseDeleteObjects(*body)
	if err != nil {
		return err
	}
	for _, o := range batch.Objects {
		if err := plainKey(o.Key); err != nil {
			return err
		}
		op.Keys = append(op.Keys, o.Key)
	}
	return nil
}

// plainKey applies objectKey's rules to a key given unescaped.
func plainKey(k string) error {
	if k == "" {
		return malformed("An object key is empty")
	}
	segs := strings.Split(k, "/")
	for i, s := range segs {
		if s == "." || s == ".." || strings.Contains(s, `\`) || (s == "" && i != len(segs)-1) {
			return refuse("An object key contains a dot segment, an empty segment or a backslash")
		}
		for _, c := range s {
			if c < 0x20 || c == 0x7f {
				return refuse("An object key contains a control character")
			}
		}
	}
	return nil
}

// payloadHash picks the x-amz-content-sha256 to sign with. A body sent
// for checking is bound by its own hash; otherwise the engine's value is
// honoured when it is a plain hash or an unsigned marker, and chunk
// signatures (which would need the catalog's key per chunk) are refused.
func payloadHash(op *S3Op, body *string, h map[string]checkedHeader) error {
	if body != nil && *body != "" {
		sum := sha256.Sum256([]byte(*body))
		op.PayloadHash = hex.EncodeToString(sum[:])
		return nil
	}
	v := h["x-amz-content-sha256"].Value
	switch {
	case v == "":
	case v == unsignedPayload || v == "STREAMING-UNSIGNED-PAYLOAD-TRAILER":
		op.PayloadHash = v
	case len(v) == 64 && isHex(v):
		op.PayloadHash = strings.ToLower(v)
	default:
		return malformed("The catalog cannot sign a payload declared as %q; send UNSIGNED-PAYLOAD or the body's SHA-256", v)
	}
	return nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

func paramNames(q url.Values) string {
	if len(q) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// CheckS3Op fails with a forbidden SignRefusal unless everything op
// touches lies strictly inside the table at loc and level allows it:
// reads and lists need read access, everything else read-write.
func CheckS3Op(op S3Op, loc Location, level AccessLevel) error {
	if loc.Scheme != "s3" || op.Bucket != loc.Bucket {
		return refuse("The request is for another bucket than the table's")
	}
	dir := loc.dir()
	for _, k := range op.Keys {
		if !strings.HasPrefix(k, dir) || len(k) == len(dir) {
			return refuse("The request names an object outside the table's location")
		}
	}
	if op.Name == "ListObjects" || op.Name == "ListObjectsV2" {
		if !strings.HasPrefix(op.List, dir) {
			return refuse("The catalog signs only lists whose prefix lies inside the table's location")
		}
	}
	if op.Write && level != AccessReadWrite {
		return refuse("%s needs write access to the table; the caller may only read it", op.Name)
	}
	return nil
}
