package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"github.com/lakehold/catalog/service"
)

type loggerKey struct{}

func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

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
	return w.ResponseWriter.Write(b)
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

// requestContext gives each request an id (X-Request-ID, echoed back), a
// logger carrying it, the anonymous principal, panic recovery and one
// access log line.
func (s *Server) requestContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if id == "" || len(id) > 128 {
			id = newRequestID()
		}
		w.Header().Set("X-Request-ID", id)
		log := s.log.With("request_id", id)
		ctx := context.WithValue(r.Context(), loggerKey{}, log)
		ctx = service.WithPrincipal(ctx, service.Principal{Subject: "anonymous"})
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "panic serving request", "panic", p, "method", r.Method, "path", r.URL.Path)
				if sw.status == 0 {
					writeErrorModel(sw, ErrorModel{Message: "Internal server error", Type: "InternalServerError", Code: http.StatusInternalServerError})
				}
			}
			log.InfoContext(ctx, "request", "method", r.Method, "path", r.URL.EscapedPath(), "status", sw.code(),
				"duration_ms", float64(time.Since(start).Microseconds())/1000)
		}()
		next.ServeHTTP(sw, r)
	})
}
