package server

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// idempotencyGrace keeps keys a little past the advertised lifetime.
const idempotencyGrace = 5 * time.Minute

// recorder captures a response so that it can be stored for replay; the
// status is tracked by the embedded statusWriter.
type recorder struct {
	statusWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.statusWriter.Write(b)
}

// idempotentRoute reports whether a request may carry an Idempotency-Key:
// every mutating catalog route except metrics reports.
func idempotentRoute(r *http.Request) bool {
	if r.Method != http.MethodPost && r.Method != http.MethodDelete {
		return false
	}
	p := r.URL.Path
	return strings.HasPrefix(p, "/v1/") && !strings.HasSuffix(p, "/metrics")
}

// idempotency makes a repeated request with the same Idempotency-Key return
// the first final outcome without executing again. The first request claims
// the key in the database (shared by all replicas); a concurrent duplicate
// waits for it. 5xx outcomes are not stored, so a retry after one runs
// again.
func (s *Server) idempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if key == "" || !idempotentRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > 128 {
			writeError(w, r, badRequestf("Idempotency-Key is longer than 128 characters"))
			return
		}
		op := r.Method + " " + r.URL.EscapedPath()
		ttl := s.cfg.IdempotencyLifetime + idempotencyGrace
		st := s.svc.Store()
		rec, err := st.IdempotencyBegin(r.Context(), key, op, ttl)
		if err != nil {
			writeError(w, r, &service.Error{Kind: service.KindUnavailable, Message: "Cannot record idempotency key", Err: err})
			return
		}
		if rec != nil {
			s.replay(w, r, st, rec, op, ttl)
			return
		}
		rw := &recorder{statusWriter: statusWriter{ResponseWriter: w}}
		completed := false
		defer func() {
			// Runs also when the handler panicked: release the key then.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
			defer cancel()
			if !completed || rw.status >= 500 || rw.status == 0 {
				_ = st.IdempotencyAbandon(ctx, key)
				return
			}
			hdr := map[string]string{}
			for _, h := range []string{"Content-Type", "ETag"} {
				if v := rw.Header().Get(h); v != "" {
					hdr[h] = v
				}
			}
			if err := st.IdempotencyFinish(ctx, &store.IdempotencyRecord{Key: key, Status: rw.status, Headers: hdr, Body: rw.body.Bytes()}); err != nil {
				loggerFrom(r.Context()).WarnContext(ctx, "could not store idempotent outcome", "error", err)
			}
		}()
		next.ServeHTTP(rw, r)
		completed = true
	})
}

// replay answers a duplicate: the stored outcome, after waiting for a
// first request that is still running.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, st store.Store, rec *store.IdempotencyRecord, op string, ttl time.Duration) {
	if rec.Operation != op {
		writeError(w, r, &service.Error{Kind: service.KindUnprocessable, Message: "Idempotency-Key was already used for another operation: " + rec.Operation})
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for !rec.Done {
		if time.Now().After(deadline) {
			writeError(w, r, &service.Error{Kind: service.KindUnavailable, Message: "A request with this Idempotency-Key is still in progress"})
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
		next, err := st.IdempotencyBegin(r.Context(), rec.Key, op, ttl)
		if err != nil {
			writeError(w, r, &service.Error{Kind: service.KindUnavailable, Message: "Cannot read idempotency key", Err: err})
			return
		}
		if next == nil {
			// The first request failed with a 5xx and released the key; we
			// now own it, but a replay has no body to run: ask for a retry.
			_ = st.IdempotencyAbandon(r.Context(), rec.Key)
			writeError(w, r, &service.Error{Kind: service.KindUnavailable, Message: "The first request with this Idempotency-Key failed; retry"})
			return
		}
		rec = next
	}
	for k, v := range rec.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(rec.Status)
	_, _ = w.Write(rec.Body)
}
