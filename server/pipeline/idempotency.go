package pipeline

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/lakehold/catalog/server/guard"
	"github.com/lakehold/catalog/server/httperr"
	"github.com/lakehold/catalog/service"
)

// idempotencyGrace keeps keys a little past the advertised lifetime.
const idempotencyGrace = 5 * time.Minute

// recorder captures a response so that it can be stored for replay; the
// status is tracked by the embedded statusWriter.
type recorder struct {
	statusWriter
	body bytes.Buffer
	// replay, when set, is what a replay answers instead of body: the
	// response without the secrets it carried.
	replay    []byte
	hasReplay bool
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.statusWriter.Write(b)
}

// SetReplay implements ReplaySetter.
func (r *recorder) SetReplay(b []byte) { r.replay, r.hasReplay = b, true }

// ReplaySetter is implemented by the idempotency recorder: a handler whose
// response carries secrets (vended credentials) hands it the same response
// without them, which is all a replay may answer.
type ReplaySetter interface{ SetReplay(body []byte) }

// replayedWithoutSecrets is the header a replay carries when its stored
// answer had secrets removed; load the object again for fresh ones.
const replayedWithoutSecrets = "Idempotent-Replay-Redacted"

// storable decides what of a finished response may be kept for replay. A
// response marked Cache-Control: no-store carries a secret (a token, vended
// credentials, a principal's secret): only a version without the secret,
// if the handler gave one, is stored; otherwise nothing is, and a retry
// runs the request again. A secret is never written at rest.
func storable(rw *recorder) (body []byte, redacted, ok bool) {
	switch {
	case rw.hasReplay:
		return rw.replay, true, true
	case strings.Contains(strings.ToLower(rw.Header().Get("Cache-Control")), "no-store"):
		return nil, false, false
	}
	return rw.body.Bytes(), false, true
}

// idempotentRoute reports whether a request may carry an Idempotency-Key:
// every mutating catalog route except metrics reports and the OAuth token
// endpoint. The token endpoint answers a secret to whoever presents the
// credentials, and its callers are not yet authenticated, so a stored
// answer could be replayed to anyone who repeats the key; sign-in changes
// no catalog state, so a repeat simply signs in again.
func idempotentRoute(r *http.Request) bool {
	if r.Method != http.MethodPost && r.Method != http.MethodDelete {
		return false
	}
	p := r.URL.Path
	return strings.HasPrefix(p, "/v1/") && !strings.HasSuffix(p, "/metrics") && p != guard.TokenPath
}

// validKey accepts 1 to 128 printable ASCII characters (a UUIDv7 is 36).
func validKey(k string) bool {
	if len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}

// Idempotency makes a repeated request with the same Idempotency-Key return
// the first final outcome without executing again (service.BeginIdempotent
// holds the rules: 422 for a key reused with another request, a renewed
// lease so that a dead holder blocks retries only briefly). 5xx outcomes are
// not stored, so a retry after one runs again.
func (p *Pipeline) Idempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if key == "" || !idempotentRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !validKey(key) {
			httperr.Write(w, r, httperr.BadRequestf("Idempotency-Key must be 1 to 128 printable ASCII characters"))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			if e := httperr.TooLarge(err); e != nil {
				httperr.Write(w, r, e)
				return
			}
			httperr.Write(w, r, httperr.BadRequestf("Cannot read the request body"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		op := r.Method + " " + r.URL.EscapedPath()
		if r.URL.RawQuery != "" {
			op += "?" + r.URL.RawQuery
		}
		out, claim, err := p.svc.BeginIdempotent(r.Context(), service.IdempotentRequest{
			Key: key, Operation: op, Body: body, Lifetime: p.cfg.IdempotencyLifetime + idempotencyGrace,
			Lease: p.cfg.IdempotencyLease, MaxWait: p.cfg.IdempotencyWait,
		})
		switch {
		case err != nil:
			httperr.Write(w, r, err)
		case out != nil:
			replay(w, out)
		default:
			p.runClaimed(w, r, next, claim)
		}
	})
}

// runClaimed runs the request under a held key and stores a final outcome,
// or releases the key after a 5xx or a panic.
func (p *Pipeline) runClaimed(w http.ResponseWriter, r *http.Request, next http.Handler, claim *service.IdempotencyClaim) {
	rw := &recorder{statusWriter: statusWriter{ResponseWriter: w}}
	r = r.WithContext(claim.Context(r.Context()))
	completed := false
	defer func() {
		// Runs also when the handler panicked: release the key then.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		body, redacted, ok := storable(rw)
		if !completed || rw.status >= 500 || rw.status == 0 || !ok {
			claim.Abandon(ctx)
			return
		}
		hdr := map[string]string{}
		for _, h := range []string{"Content-Type", "ETag"} {
			if v := rw.Header().Get(h); v != "" {
				hdr[h] = v
			}
		}
		if redacted {
			hdr[replayedWithoutSecrets] = "true"
		}
		if err := claim.Finish(ctx, service.IdempotentOutcome{Status: rw.status, Headers: hdr, Body: body}); err != nil {
			httperr.Logger(r.Context()).WarnContext(ctx, "could not store idempotent outcome", "error", err)
		}
	}()
	next.ServeHTTP(rw, r)
	completed = true
}

// replay answers a duplicate with the stored outcome.
func replay(w http.ResponseWriter, out *service.IdempotentOutcome) {
	for k, v := range out.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(out.Status)
	_, _ = w.Write(out.Body)
}
