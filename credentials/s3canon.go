package credentials

import (
	"net/url"
	"strings"
)

// The catalog signs only what it checked. An S3 request that a store
// could read two ways (a header given twice, a query parameter given
// twice, a copy source that splits into two header values) is refused,
// and what is signed is re-serialized from the values the policy read,
// never passed through: the signature then binds exactly those values.

// queryParam is one parameter of a request's query, decoded; Bare is a
// parameter written without "=" (?uploads).
type queryParam struct {
	Key, Value string
	Bare       bool
}

// parseQuery reads a raw query strictly: every parameter at most once
// (after decoding, so prefix=a&pre%66ix=b is a repeat), no raw "+" (a
// space to some readers, a plus to others) and no ";" (a separator to
// some). It returns the parameters in order and as url.Values.
func parseQuery(raw string) ([]queryParam, url.Values, error) {
	if strings.ContainsAny(raw, "+;") {
		return nil, nil, malformed("The request URI's query contains a raw '+' or ';'; encode them (%%2B, %%20, %%3B)")
	}
	var params []queryParam
	values := url.Values{}
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, hasEq := strings.Cut(pair, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, nil, malformed("The request URI's query does not parse")
		}
		if _, dup := values[key]; dup {
			return nil, nil, malformed("The request URI gives the query parameter %q more than once", key)
		}
		values[key] = []string{val}
		params = append(params, queryParam{Key: key, Value: val, Bare: !hasEq && val == ""})
	}
	return params, values, nil
}

// encodeQuery writes params back in their order, encoded as SigV4
// canonicalizes them (what the signature covers).
func encodeQuery(params []queryParam) string {
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(awsEscape(p.Key, false))
		if !p.Bare {
			b.WriteByte('=')
			b.WriteString(awsEscape(p.Value, false))
		}
	}
	return b.String()
}

// awsEscape percent-encodes every byte but the unreserved ones (and "/"
// when keepSlash), with upper-case hex, as SigV4 and the AWS SDKs do.
func awsEscape(s string, keepSlash bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', keepSlash && c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// rerouting are headers some servers, gateways and proxies read as the
// request's real method, host or path: a signed GET could then act as a
// DELETE, or a path-style request on the table reach another bucket or
// key. Engines never send them.
var rerouting = set("x-http-method-override", "x-http-method", "x-method-override",
	"x-forwarded-host", "forwarded", "x-original-url", "x-rewrite-url", "x-forwarded-prefix", "x-original-host")

// checkHeaders returns the request's headers keyed by lower-case name,
// each with its one value (surrounding blanks trimmed, as HTTP reads
// them) and the name as the engine spelled it. It refuses a name given
// twice in any case (x-amz-copy-source and X-Amz-Copy-Source), a header
// with no value or several, a name that is not an HTTP token, a value
// with a control character, and headers that reroute the request.
func checkHeaders(h map[string][]string) (map[string]checkedHeader, error) {
	out := make(map[string]checkedHeader, len(h))
	for name, vs := range h {
		if !isToken(name) {
			return nil, malformed("A request header name is not an HTTP token")
		}
		lower := strings.ToLower(name)
		if _, dup := out[lower]; dup {
			return nil, malformed("The request gives the header %s more than once", lower)
		}
		if len(vs) != 1 {
			return nil, malformed("The request gives the header %s %d values; the catalog signs one", lower, len(vs))
		}
		if rerouting[lower] {
			return nil, refuse("The catalog does not sign requests with %s", lower)
		}
		for _, c := range vs[0] {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				return nil, malformed("The request header %s contains a control character", lower)
			}
		}
		out[lower] = checkedHeader{Name: name, Value: strings.Trim(vs[0], " \t")}
	}
	return out, nil
}

// checkedHeader is a header as the policy read it.
type checkedHeader struct {
	Name, Value string
}

// isToken reports whether s is an HTTP field name (RFC 9110 token):
// ASCII only, so no Unicode case folding can make two names one.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
