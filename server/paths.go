package server

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	names "github.com/lakehold/catalog/service/ident"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service"
)

// namespaceSep is the namespace level separator in paths (0x1F, sent as %1F).
const namespaceSep = "\x1f"

// escapedRouting makes chi route on the escaped path, so that an encoded
// '/' inside a name or namespace level does not split path segments, and
// normalises form-encoding ('+' for space, sent by Java's URLEncoder) to
// %20. The generated wrappers then unescape each parameter exactly once.
func escapedRouting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.URL.EscapedPath()
		r.URL.RawPath = strings.ReplaceAll(raw, "+", "%20")
		next.ServeHTTP(w, r)
	})
}

// decodeNamespace splits an (already unescaped) namespace path parameter
// into levels. A literal 0x1F can only come from the separator.
func decodeNamespace(p string) ([]string, error) {
	if p == "" {
		return nil, &fault.Error{Kind: fault.BadRequest, Message: "Invalid namespace: empty"}
	}
	if !utf8.ValidString(p) {
		return nil, &fault.Error{Kind: fault.BadRequest, Message: "Invalid namespace: not valid UTF-8"}
	}
	levels := strings.Split(p, namespaceSep)
	if err := names.ValidateNamespace(levels); err != nil {
		return nil, err
	}
	return levels, nil
}

// decodeParent splits the `parent` query parameter (levels joined by the
// raw separator; PyIceberg also percent-encodes each level).
func decodeParent(p string) ([]string, error) {
	levels, err := decodeNamespace(p)
	if err != nil {
		return nil, err
	}
	for i, l := range levels {
		if strings.Contains(l, "%") {
			if u, err := url.PathUnescape(l); err == nil {
				levels[i] = u
			}
		}
	}
	if err := names.ValidateNamespace(levels); err != nil {
		return nil, err // unescaping may have produced a control character
	}
	return levels, nil
}

func ident(ns string, name string) (service.Ident, error) {
	levels, err := decodeNamespace(ns)
	if err != nil {
		return service.Ident{}, err
	}
	if err := names.ValidateName(name); err != nil {
		return service.Ident{}, err
	}
	return service.Ident{Namespace: levels, Name: name}, nil
}
