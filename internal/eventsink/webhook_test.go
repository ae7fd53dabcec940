package eventsink

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSecret is a Standard Webhooks secret (24 random bytes, base64).
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// hookReceiver is a webhook consumer: it verifies each request with
// VerifyWebhook (401 if that fails), answers the statuses of plan in turn
// (0 accepts) and then accepts everything, and records what it accepted.
type hookReceiver struct {
	secret string

	mu       sync.Mutex
	plan     []int
	requests int
	ids      []string
	bodies   []string
	headers  []http.Header
	user     string
}

func newHookReceiver(t *testing.T, secret string, plan ...int) (*hookReceiver, *httptest.Server) {
	h := &hookReceiver{secret: secret, plan: plan}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
	if err := VerifyWebhook(h.secret, r.Header, body, time.Minute); err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if len(h.plan) > 0 {
		status := h.plan[0]
		h.plan = h.plan[1:]
		if status != 0 {
			w.WriteHeader(status)
			return
		}
	}
	h.ids = append(h.ids, r.Header.Get("webhook-id"))
	h.bodies = append(h.bodies, string(body))
	h.headers = append(h.headers, r.Header.Clone())
	h.user, _, _ = r.BasicAuth()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) accepted() ([]string, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ids, h.bodies
}

func newTestWebhook(t *testing.T, cfg WebhookConfig) *Webhook {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = testSecret
	}
	w, err := NewWebhook(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func messageBodies(msgs []Message) []string {
	bodies := make([]string, len(msgs))
	for i, m := range msgs {
		bodies[i] = string(m.Body)
	}
	return bodies
}

func TestWebhookPostsEachEventSignedAndInOrder(t *testing.T) {
	h, srv := newHookReceiver(t, testSecret)
	sink := newTestWebhook(t, WebhookConfig{URL: srv.URL + "/hook"})
	assert.Equal(t, "webhook", sink.Name())

	msgs := testMessages(0, 6)
	before := time.Now().Unix()
	n, err := sink.Publish(context.Background(), msgs)
	require.NoError(t, err)
	assert.Equal(t, 6, n)

	ids, bodies := h.accepted()
	assert.Equal(t, messageIDs(msgs), ids)
	assert.Equal(t, messageBodies(msgs), bodies)
	for _, hdr := range h.headers {
		assert.Equal(t, "application/cloudevents+json", hdr.Get("Content-Type"))
		ts, err := strconv.ParseInt(hdr.Get("webhook-timestamp"), 10, 64)
		require.NoError(t, err)
		assert.InDelta(t, before, ts, 5)
		assert.True(t, strings.HasPrefix(hdr.Get("webhook-signature"), "v1,"))
	}
}

func TestWebhookStopsAtTheFirstFailureAndResumes(t *testing.T) {
	// Two accepted, then a 500, then a 503, then all accepted.
	h, srv := newHookReceiver(t, testSecret, 0, 0, http.StatusInternalServerError, http.StatusServiceUnavailable)
	sink := newTestWebhook(t, WebhookConfig{URL: srv.URL})
	ctx := context.Background()
	msgs := testMessages(0, 5)

	n, err := sink.Publish(ctx, msgs)
	require.Error(t, err)
	assert.Equal(t, 2, n)
	t.Logf("error: %v", err)
	assert.Contains(t, err.Error(), "500")
	assert.Contains(t, err.Error(), msgs[2].ID)

	n, err = sink.Publish(ctx, msgs[2:])
	require.Error(t, err)
	assert.Zero(t, n)
	assert.Contains(t, err.Error(), "503")

	n, err = sink.Publish(ctx, msgs[2:])
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	ids, bodies := h.accepted()
	assert.Equal(t, messageIDs(msgs), ids, "each accepted once, in order")
	assert.Equal(t, messageBodies(msgs), bodies)
	assert.Equal(t, 7, h.requests, "nothing sent past a failure")
}

func TestWebhookWithTheWrongSecretIsRefused(t *testing.T) {
	_, srv := newHookReceiver(t, "a-different-secret-of-some-length")
	sink := newTestWebhook(t, WebhookConfig{URL: srv.URL})
	n, err := sink.Publish(context.Background(), testMessages(0, 2))
	require.Error(t, err)
	assert.Zero(t, n)
	assert.Contains(t, err.Error(), "401")
}

func TestWebhookWithAnOldTimestampIsRefused(t *testing.T) {
	h, srv := newHookReceiver(t, testSecret)
	sink := newTestWebhook(t, WebhookConfig{URL: srv.URL})
	sink.now = func() time.Time { return time.Now().Add(-10 * time.Minute) }
	n, err := sink.Publish(context.Background(), testMessages(0, 1))
	require.Error(t, err)
	assert.Zero(t, n)
	assert.Contains(t, err.Error(), "401")
	ids, _ := h.accepted()
	assert.Empty(t, ids)
}

func TestWebhookErrorsNameNoSecret(t *testing.T) {
	const password, query, path = "pass-5Gq1", "tok-9Xw2", "path-3Hk7"
	h, srv := newHookReceiver(t, testSecret, http.StatusBadGateway)
	url := strings.Replace(srv.URL, "//", "//hookuser:"+password+"@", 1) + "/" + path + "?token=" + query
	sink := newTestWebhook(t, WebhookConfig{URL: url})
	ctx := context.Background()

	n, err := sink.Publish(ctx, testMessages(0, 1))
	require.Error(t, err)
	assert.Zero(t, n)
	assert.Contains(t, err.Error(), "502")
	checkNoSecret := func(err error) {
		t.Helper()
		for _, s := range []string{password, query, path, "hookuser", testSecret, testSecret[len("whsec_"):]} {
			assert.NotContains(t, err.Error(), s)
		}
	}
	t.Logf("error: %v", err)
	checkNoSecret(err)

	n, err = sink.Publish(ctx, testMessages(0, 1))
	require.NoError(t, err, "the URL's userinfo is basic authentication")
	assert.Equal(t, 1, n)
	assert.Equal(t, "hookuser", h.user)

	srv.Close() // a transport error: connection refused
	n, err = sink.Publish(ctx, testMessages(1, 1))
	require.Error(t, err)
	assert.Zero(t, n)
	t.Logf("error: %v", err)
	checkNoSecret(err)
}

func TestWebhookFollowsNoRedirect(t *testing.T) {
	h, target := newHookReceiver(t, testSecret)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
	t.Cleanup(redirect.Close)
	sink := newTestWebhook(t, WebhookConfig{URL: redirect.URL})
	n, err := sink.Publish(context.Background(), testMessages(0, 1))
	require.Error(t, err)
	assert.Zero(t, n)
	t.Logf("error: %v", err)
	assert.Contains(t, err.Error(), "302")
	ids, _ := h.accepted()
	assert.Empty(t, ids)
}

func TestWebhookTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	sink := newTestWebhook(t, WebhookConfig{URL: srv.URL, Timeout: 200 * time.Millisecond})
	start := time.Now()
	n, err := sink.Publish(context.Background(), testMessages(0, 2))
	require.Error(t, err)
	assert.Zero(t, n)
	t.Logf("error: %v", err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "no response within 200ms")
	assert.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err = sink.Publish(ctx, testMessages(0, 2))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, n)
}

func TestNewWebhookValidates(t *testing.T) {
	for name, cfg := range map[string]WebhookConfig{
		"no URL":        {Secret: testSecret},
		"relative URL":  {URL: "/hook", Secret: testSecret},
		"ftp URL":       {URL: "ftp://example.com/hook", Secret: testSecret},
		"no host":       {URL: "http:///hook", Secret: testSecret},
		"no secret":     {URL: "https://example.com/hook"},
		"short secret":  {URL: "https://example.com/hook", Secret: "fifteen-bytes!!"},
		"short whsec":   {URL: "https://example.com/hook", Secret: "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 15))},
		"invalid whsec": {URL: "https://example.com/hook", Secret: "whsec_not*base64!"},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := NewWebhook(cfg)
			assert.Error(t, err)
			assert.Nil(t, w)
		})
	}
	_, err := NewWebhook(WebhookConfig{URL: "https://example.com/hook", Secret: "sixteen-bytes!!!"})
	assert.NoError(t, err, "a raw secret of 16 bytes")
}

func TestWebhookSignatureMatchesTheStandardWebhooksVector(t *testing.T) {
	// The example of the Standard Webhooks specification.
	const id, ts, body = "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, `{"test": 2432232314}`
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	key, err := webhookKey(testSecret)
	require.NoError(t, err)
	assert.Equal(t, want, signWebhook(key, id, ts, []byte(body)))

	hdr := http.Header{}
	hdr.Set("webhook-id", id)
	hdr.Set("webhook-timestamp", strconv.Itoa(ts))
	hdr.Set("webhook-signature", "v1,bm9wZQ== v2,whatever "+want)
	since := time.Since(time.Unix(ts, 0))
	assert.NoError(t, VerifyWebhook(testSecret, hdr, []byte(body), since+time.Hour))
	assert.ErrorIs(t, VerifyWebhook(testSecret, hdr, []byte(body), 0), ErrWebhookTimestamp)
}

// signedHeader signs body as the sink would, at time at.
func signedHeader(t *testing.T, secret, id string, at time.Time, body []byte) http.Header {
	key, err := webhookKey(secret)
	require.NoError(t, err)
	hdr := http.Header{}
	hdr.Set("webhook-id", id)
	hdr.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	hdr.Set("webhook-signature", signWebhook(key, id, at.Unix(), body))
	return hdr
}

func TestVerifyWebhook(t *testing.T) {
	body := []byte(`{"id":"evt-1"}`)
	now := time.Now()
	ok := signedHeader(t, testSecret, "evt-1", now, body)
	require.NoError(t, VerifyWebhook(testSecret, ok, body, time.Minute))

	other := "another-secret-0123456789"
	assert.ErrorIs(t, VerifyWebhook(other, ok, body, time.Minute), ErrWebhookSignature, "wrong secret")
	assert.ErrorIs(t, VerifyWebhook(testSecret, ok, []byte(`{"id":"evt-2"}`), time.Minute), ErrWebhookSignature, "changed body")
	changedID := ok.Clone()
	changedID.Set("webhook-id", "evt-2")
	assert.ErrorIs(t, VerifyWebhook(testSecret, changedID, body, time.Minute), ErrWebhookSignature, "changed id")

	old := signedHeader(t, testSecret, "evt-1", now.Add(-6*time.Minute), body)
	assert.ErrorIs(t, VerifyWebhook(testSecret, old, body, 0), ErrWebhookTimestamp, "too old")
	future := signedHeader(t, testSecret, "evt-1", now.Add(2*time.Minute), body)
	assert.ErrorIs(t, VerifyWebhook(testSecret, future, body, time.Minute), ErrWebhookTimestamp, "too new")
	assert.NoError(t, VerifyWebhook(testSecret, future, body, 3*time.Minute))

	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		h := ok.Clone()
		h.Del(name)
		assert.ErrorIs(t, VerifyWebhook(testSecret, h, body, time.Minute), ErrWebhookHeaders, "without "+name)
	}
	bad := ok.Clone()
	bad.Set("webhook-timestamp", "yesterday")
	assert.ErrorIs(t, VerifyWebhook(testSecret, bad, body, time.Minute), ErrWebhookHeaders)

	// A raw (not whsec_) secret works the same way on both sides.
	raw := "a-raw-secret-string-of-32-bytes!"
	assert.NoError(t, VerifyWebhook(raw, signedHeader(t, raw, "evt-1", now, body), body, time.Minute))
	assert.False(t, errors.Is(VerifyWebhook("short", ok, body, time.Minute), ErrWebhookSignature), "an invalid secret is its own error")
}
