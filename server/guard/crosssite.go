package guard

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/server/httperr"
)

// Cross-site requests.
//
// With authentication off (the embedded default on 127.0.0.1:8181) every
// caller may do everything, and a web page on any site can make the
// visitor's browser call the catalog: a "simple" request (a form POST, or a
// fetch whose body is text/plain or a Blob without a type) needs no CORS
// preflight, so without these rules a page could create namespaces, commit,
// rename tables and create warehouses at local paths of its choosing. With
// DNS rebinding (the page's own host name re-pointed to 127.0.0.1) the page
// is even same-origin with the catalog and can read the answers. Non-browser
// clients (engines, the CLI, scripts) are unaffected: they send no Origin,
// send application/json, and name the host they connect to.
//
// CrossSite therefore refuses, before authentication, idempotency and any
// handler:
//
//  1. a Host that is not a loopback name (localhost, *.localhost, 127.0.0.0/8,
//     [::1]; any port) or in Config.AllowedHosts, whenever authentication is
//     off or AllowedHosts is set (403): a rebinding page's requests carry its
//     own host name. /healthz and /readyz are exempt: probes name the pod's
//     address, and the answers tell a page nothing.
//  2. an Origin header that is neither the catalog's own origin (the scheme,
//     host and port the request was sent to) nor in Config.AllowedOrigins
//     (403); without Origin, Sec-Fetch-Site: cross-site, except for a
//     top-level GET navigation (a link to /ui/ from elsewhere).
//  3. a request body without a JSON Content-Type on the JSON routes, every
//     route under /v1/ and /management/ but the form-encoded token endpoint
//     (415): no browser can send application/json cross-site without a
//     preflight, which the catalog never answers with CORS headers.
//
// Bodyless requests pass rule 3, whatever their Content-Type.

// crossSitePolicy holds the parsed allow-lists.
type crossSitePolicy struct {
	checkHost   bool
	anyHost     bool
	hosts       map[string]bool // exact names and addresses
	hostDomains []string        // ".example.com": the domain and its subdomains
	origins     map[string]bool // normalized scheme://host:port
}

// newCrossSitePolicy parses the allow-lists of cfg; entries that do not
// parse are left out (ParseAllowedOrigins and ParseAllowedHosts report them
// to the command line first).
func newCrossSitePolicy(cfg Config) crossSitePolicy {
	p := crossSitePolicy{
		checkHost: cfg.Auth == nil || len(cfg.AllowedHosts) > 0,
		hosts:     map[string]bool{},
		origins:   map[string]bool{},
	}
	for _, h := range cfg.AllowedHosts {
		h, err := normalizeAllowedHost(h)
		switch {
		case err != nil:
		case h == "*":
			p.anyHost = true
		case strings.HasPrefix(h, "."):
			p.hostDomains = append(p.hostDomains, h)
		default:
			p.hosts[h] = true
		}
	}
	for _, o := range cfg.AllowedOrigins {
		if o, ok := normalizeOrigin(o, true); ok {
			p.origins[o] = true
		}
	}
	return p
}

// ParseAllowedOrigins parses a comma-separated list of origins
// (scheme://host[:port], http or https) for Config.AllowedOrigins; an
// entry of another form is an error naming it.
func ParseAllowedOrigins(list string) ([]string, error) {
	var out []string
	for _, o := range splitList(list) {
		n, ok := normalizeOrigin(o, true)
		if !ok {
			return nil, fmt.Errorf("origin %q: want scheme://host[:port] with scheme http or https", o)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseAllowedHosts parses a comma-separated list of host names or
// addresses for Config.AllowedHosts: a name, an IP address, ".example.com"
// for a domain and its subdomains, or "*" for any host. An entry with a
// scheme, path, user or wildcard elsewhere is an error naming it.
func ParseAllowedHosts(list string) ([]string, error) {
	var out []string
	for _, h := range splitList(list) {
		n, err := normalizeAllowedHost(h)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func normalizeAllowedHost(h string) (string, error) {
	if h == "*" {
		return h, nil
	}
	n := hostOnly(h)
	if n == "" || n == "." || strings.ContainsAny(h, "/@?#*% \t") {
		return "", fmt.Errorf("host %q: want a host name or address without scheme or path, .domain, or *", h)
	}
	return n, nil
}

// hostOnly returns the lower-cased host of a Host value or host[:port],
// without port, IPv6 brackets or a trailing dot.
func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// loopbackHost reports whether a host (hostOnly form) can only name this
// machine: localhost and *.localhost (RFC 6761), loopback addresses.
func loopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (p *crossSitePolicy) hostAllowed(hostport string) bool {
	h := hostOnly(hostport)
	if p.anyHost || loopbackHost(h) || p.hosts[h] {
		return true
	}
	for _, d := range p.hostDomains {
		if h == d[1:] || strings.HasSuffix(h, d) {
			return true
		}
	}
	return false
}

// normalizeOrigin returns origin as scheme://host:port (lower case, the
// port explicit). An Origin header is exactly that; an allow-list entry
// (lenient) may end in "/".
func normalizeOrigin(origin string, lenient bool) (string, bool) {
	if lenient {
		origin = strings.TrimSuffix(origin, "/")
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", false
	}
	return originOf(u.Scheme, u.Host)
}

// originOf is the normalized origin of scheme and a host[:port].
func originOf(scheme, hostport string) (string, bool) {
	host := hostOnly(hostport)
	if host == "" {
		return "", false
	}
	port := ""
	if _, p, err := net.SplitHostPort(hostport); err == nil {
		port = p
	}
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port), true
}

// ownOrigin is the origin the request was sent to: its Host, with https
// when it came over TLS or through a proxy that says so
// (X-Forwarded-Proto: a page cannot set that header without a preflight).
func ownOrigin(r *http.Request) (string, bool) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	} else if p, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ","); strings.EqualFold(strings.TrimSpace(p), "https") {
		scheme = "https"
	}
	return originOf(scheme, r.Host)
}

func (p *crossSitePolicy) originAllowed(r *http.Request, origin string) bool {
	o, ok := normalizeOrigin(origin, false)
	if !ok {
		return false // "null" (sandboxed frames, file: pages) and garbage
	}
	if own, ok := ownOrigin(r); ok && o == own {
		return true
	}
	return p.origins[o]
}

// JSONRoute reports whether path's request bodies are decoded as JSON:
// the REST and management API, except the form-encoded token endpoint.
func JSONRoute(path string) bool {
	return (strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/management/")) && path != TokenPath
}

// HasBody reports whether r carries a request body: a non-zero
// Content-Length, or chunked.
func HasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// jsonMediaType reports whether a Content-Type value declares JSON:
// application/json or application/*+json, with any parameters.
func jsonMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && err != mime.ErrInvalidMediaParameter {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// CrossSite applies the rules above (see the comment at the top of the file).
func (g *Guard) CrossSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &g.sites
		probe := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
		if p.checkHost && !probe && !p.hostAllowed(r.Host) {
			httperr.Write(w, r, &fault.Error{Kind: fault.Forbidden,
				Message: "Host not allowed: with authentication off the catalog answers only loopback host names (localhost, 127.0.0.1, [::1]) and those given with --allowed-hosts"})
			return
		}
		if origin, ok := r.Header["Origin"]; ok {
			if len(origin) != 1 || !p.originAllowed(r, origin[0]) {
				httperr.Write(w, r, &fault.Error{Kind: fault.Forbidden,
					Message: "Cross-origin request refused: the Origin is neither the catalog's own nor one given with --allowed-origins"})
				return
			}
		} else if r.Header.Get("Sec-Fetch-Site") == "cross-site" &&
			!((r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Sec-Fetch-Mode") == "navigate") {
			httperr.Write(w, r, &fault.Error{Kind: fault.Forbidden,
				Message: "Cross-site request refused (Sec-Fetch-Site: cross-site)"})
			return
		}
		if JSONRoute(r.URL.Path) && r.Method != http.MethodGet && r.Method != http.MethodHead &&
			HasBody(r) && !jsonMediaType(r.Header.Get("Content-Type")) {
			httperr.Write(w, r, &fault.Error{Kind: fault.UnsupportedMedia,
				Message: "Unsupported media type: a request body must be sent with Content-Type: application/json"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
