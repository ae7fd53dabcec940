package guard

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/signin"
	"github.com/lakehold/catalog/server/httperr"
	"github.com/lakehold/catalog/service"
)

// signInGate admits client-credentials sign-ins at the token endpoint
// (internal/signin: concurrent verifications, lockouts per client id and
// source address; per replica) and counts the refused ones.
type signInGate struct {
	gate    *signin.Gate
	refused *prometheus.CounterVec
}

// Reasons of catalog_signin_refused_total.
const (
	refusedInvalidClient  = "invalid_client"  // 401: wrong secret or unknown client id
	refusedLockedOut      = "locked_out"      // 429: too many failures of the client id or address
	refusedBusy           = "busy"            // 503: no verification slot within the wait
	refusedSessionExpired = "session_expired" // 400: an exchange past the maximum session age
)

func newSignInGate(cfg signin.Config, reg *prometheus.Registry) *signInGate {
	g := &signInGate{
		gate: signin.New(cfg),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalog_signin_refused_total",
			Help: "Token requests refused, by reason: invalid_client (401), locked_out (429), busy (503), session_expired (400 on token exchange).",
		}, []string{"reason"}),
	}
	for _, r := range []string{refusedInvalidClient, refusedLockedOut, refusedBusy, refusedSessionExpired} {
		g.refused.WithLabelValues(r) // every series exists from the start
	}
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "catalog_signin_verifications_in_flight",
		Help: "Client secrets being verified now (at most the sign-in concurrency).",
	}, func() float64 { return float64(g.gate.InFlight()) })
	reg.MustRegister(g.refused, inFlight)
	return g
}

// signIn checks a client id and secret for the token endpoint through the
// sign-in gate and answers every failure itself: 429 slow_down with
// Retry-After when the client id or the source address is locked out
// (before any hash is computed), 503 temporarily_unavailable with
// Retry-After when no verification slot frees up in time, 401
// invalid_client for a wrong secret or an unknown id (both counted as
// failures of that id), and the Iceberg error of anything else (store
// down). The source is the connection's address, r.RemoteAddr: the
// catalog honours no forwarding headers.
func (g *Guard) signIn(w http.ResponseWriter, r *http.Request, id, secret string, basic bool) (*service.IssuedToken, bool) {
	ctx := r.Context()
	source := signin.SourceOf(r.RemoteAddr)
	done, err := g.signin.gate.Enter(ctx, id, source)
	if err != nil {
		var ref *signin.Refused
		errors.As(err, &ref)
		w.Header().Set("Retry-After", retryAfter(ref.RetryAfter))
		httperr.Logger(ctx).DebugContext(ctx, "sign-in refused", "reason", string(ref.Reason), "client_id", loggableClientID(id), "source", source)
		if ref.Reason == signin.Busy {
			g.signin.refused.WithLabelValues(refusedBusy).Inc()
			oauthFail(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many sign-ins are being checked; retry later")
			return nil, false
		}
		g.signin.refused.WithLabelValues(refusedLockedOut).Inc()
		oauthFail(w, http.StatusTooManyRequests, "slow_down", "too many failed sign-ins for this client or from this address; retry later")
		return nil, false
	}
	tok, err := g.svc.Admin().IssueToken(ctx, id, secret)
	switch {
	case err == nil:
		done(signin.Succeeded)
		return tok, true
	case fault.KindOf(err) == fault.Unauthorized:
		if lock := done(signin.Failed); lock > 0 {
			httperr.Logger(ctx).InfoContext(ctx, "sign-in lockout", "client_id", loggableClientID(id), "source", source, "lockout", lock.String())
		}
		g.signin.refused.WithLabelValues(refusedInvalidClient).Inc()
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="lakehold"`)
		}
		oauthFail(w, http.StatusUnauthorized, "invalid_client", "invalid client credentials")
	default:
		done(signin.Aborted)
		httperr.Write(w, r, err)
	}
	return nil, false
}

// loggableClientID returns id when it has the form of the catalog's client
// ids (secret.NewClientID: "lh-" and 16 characters), else a placeholder:
// whatever else a client sent as its id (its secret, pasted in the wrong
// field; a megabyte of junk) stays out of the log.
func loggableClientID(id string) string {
	if len(id) != 19 || id[:3] != "lh-" {
		return "(not a client id)"
	}
	for i := 3; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "(not a client id)"
		}
	}
	return id
}

// retryAfter renders d as Retry-After seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10)
}
