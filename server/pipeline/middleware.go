package pipeline

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/server/guard"
	"github.com/lakehold/catalog/server/httperr"
	"github.com/lakehold/catalog/service"
)

// statusWriter remembers the status code written and, when keepError is
// set (the access log's writer), the start of an error response's body.
type statusWriter struct {
	http.ResponseWriter
	status    int
	keepError bool
	errBody   []byte
}

// maxErrorBody bounds what the access log keeps of an error body: enough
// for the ErrorModel's type and reason ahead of a long message.
const maxErrorBody = 4 << 10

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.keepError && w.status >= 400 && len(w.errBody) < maxErrorBody {
		w.errBody = append(w.errBody, b[:min(len(b), maxErrorBody-len(w.errBody))]...)
	}
	return w.ResponseWriter.Write(b)
}

// errorAttrs are the access log's attributes of an error response: the
// ErrorModel's type and reason (error_type, error_reason), or the error
// code of an OAuth error body ({"error": "invalid_client"}); none when the
// body is neither or was cut off before them.
func (w *statusWriter) errorAttrs() []any {
	if w.status < 400 || len(w.errBody) == 0 {
		return nil
	}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(w.errBody, &body) != nil || len(body.Error) == 0 {
		return nil
	}
	var oauth string
	if json.Unmarshal(body.Error, &oauth) == nil {
		return []any{"error_type", oauth}
	}
	var m struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body.Error, &m) != nil || m.Type == "" {
		return nil
	}
	if m.Reason != "" {
		return []any{"error_type", m.Type, "error_reason", m.Reason}
	}
	return []any{"error_type", m.Type}
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RequestContext gives each request an id (X-Request-ID, echoed back), a
// logger carrying it, the anonymous principal, panic recovery and one
// access log line ("msg":"request", with request_id; for a 4xx or 5xx also
// the error_type and error_reason of its ErrorModel). With tracing on it
// also starts the request's span (tracing.go), and every line logged for
// the request carries its trace_id and span_id.
func (p *Pipeline) RequestContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if id == "" || len(id) > 128 {
			id = newRequestID()
		}
		w.Header().Set("X-Request-ID", id)
		log := p.cfg.Logger.With("request_id", id)
		sw := &statusWriter{ResponseWriter: w, keepError: true}
		ctx, log, endSpan := p.traceRequest(r, sw, id, log)
		defer endSpan() // after the access log line below: the route is known by then
		ctx = httperr.WithLogger(ctx, log)
		ctx = identity.With(ctx, identity.From(ctx)) // anonymous unless a wrapping handler (tests) set one
		r = r.WithContext(ctx)
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				log.ErrorContext(ctx, "panic serving request", "panic", v, "method", r.Method, "path", r.URL.Path)
				if sw.status == 0 {
					httperr.WriteModel(sw, httperr.Model(fault.New(fault.Internal, "Internal server error")))
				}
			}
			attrs := append([]any{"method", r.Method, "path", r.URL.EscapedPath(), "status", sw.code(),
				"duration_ms", float64(time.Since(start).Microseconds()) / 1000}, sw.errorAttrs()...)
			log.InfoContext(ctx, "request", attrs...)
		}()
		next.ServeHTTP(sw, r)
	})
}

// LimitBody caps request bodies at cfg.MaxRequestBody: a declared length
// over it is refused before reading, a longer chunked body fails its read
// (the decoders then answer 413 through httperr.BadRequest).
func (p *Pipeline) LimitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := p.cfg.MaxRequestBody
		if r.ContentLength > limit {
			httperr.Write(w, r, httperr.BodyTooLarge(limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if hasJSONBody(r) {
			// Read the (bounded) body once to refuse bytes that are not
			// UTF-8: Go's decoder would silently turn them into U+FFFD
			// and store a name or property nobody sent.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				httperr.BadRequest(w, r, err)
				return
			}
			if !utf8.Valid(body) {
				httperr.Write(w, r, httperr.BadRequestf("Malformed request: the body is not valid UTF-8"))
				return
			}
			if authorizedBodyRoute(r.URL.Path) {
				if k := duplicateKey(body); k != "" {
					httperr.Write(w, r, httperr.BadRequestf("Malformed request: the key %q appears twice in one object", clipKey(k)))
					return
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// hasJSONBody reports whether r carries a body the catalog decodes as JSON:
// a body on a JSON route (guard.CrossSite has refused any Content-Type but
// JSON there; the form-encoded token request is not one).
func hasJSONBody(r *http.Request) bool {
	return guard.JSONRoute(r.URL.Path) && r.Method != http.MethodGet && r.Method != http.MethodHead && guard.HasBody(r)
}

// CheckNames refuses, with the same 400 on every backend, path segments and
// query values that no name can contain: invalid UTF-8 and control
// characters (0x1F excepted: it separates namespace levels, and the name
// rules of package service then apply level by level), and segments longer
// than the longest namespace. Without it such bytes would reach SQL, where
// Postgres and SQLite disagree about them.
func CheckNames(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, seg := range strings.Split(r.URL.EscapedPath(), "/") {
			u, err := url.PathUnescape(seg)
			if err != nil {
				continue // the router answers malformed escapes
			}
			if len(u) > service.MaxNamespaceBytes {
				httperr.Write(w, r, httperr.BadRequestf("Invalid path: a path segment is %d bytes long, the limit is %d", len(u), service.MaxNamespaceBytes))
				return
			}
			if msg := badNameBytes(u); msg != "" {
				httperr.Write(w, r, httperr.BadRequestf("Invalid path: %s", msg))
				return
			}
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			httperr.Write(w, r, httperr.BadRequestf("Invalid query string: malformed escape or separator"))
			return
		}
		for k, vs := range q {
			for _, v := range vs {
				if msg := badNameBytes(v); msg != "" {
					httperr.Write(w, r, httperr.BadRequestf("Invalid query parameter %s: %s", url.QueryEscape(k), msg))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// badNameBytes describes why s cannot be (part of) a name, or returns "".
func badNameBytes(s string) string {
	if !utf8.ValidString(s) {
		return "names must be valid UTF-8"
	}
	for _, c := range s {
		if c != 0x1f && unicode.IsControl(c) {
			return fmt.Sprintf("names must not contain control characters (found U+%04X)", c)
		}
	}
	return ""
}
