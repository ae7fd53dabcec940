package eventsink

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of WebhookConfig and VerifyWebhook.
const (
	// DefaultWebhookTimeout bounds each request.
	DefaultWebhookTimeout = 10 * time.Second
	// DefaultWebhookTolerance is how far a timestamp may be from now.
	DefaultWebhookTolerance = 5 * time.Minute
)

// Header names of the Standard Webhooks specification (standardwebhooks.com).
const (
	// WebhookIDHeader carries the event id, the same on every attempt.
	WebhookIDHeader = "webhook-id"
	// WebhookTimestampHeader carries the attempt's time in unix seconds.
	WebhookTimestampHeader = "webhook-timestamp"
	// WebhookSignatureHeader carries space-separated "v1,<base64>"
	// signatures.
	WebhookSignatureHeader = "webhook-signature"
)

// Errors of VerifyWebhook.
var (
	// ErrWebhookHeaders means a signature header is missing or malformed.
	ErrWebhookHeaders = errors.New("webhook: missing or malformed signature headers")
	// ErrWebhookTimestamp means the webhook-timestamp is outside the
	// tolerated window around now.
	ErrWebhookTimestamp = errors.New("webhook: timestamp outside the tolerated window")
	// ErrWebhookSignature means no v1 signature matches the message.
	ErrWebhookSignature = errors.New("webhook: no matching signature")
)

// whsecPrefix marks a base64 secret in the Standard Webhooks format.
const whsecPrefix = "whsec_"

// minWebhookKey is the shortest signing key accepted, in bytes.
const minWebhookKey = 16

// WebhookConfig configures the webhook sink.
type WebhookConfig struct {
	// URL is the http or https endpoint that each event is POSTed to.
	// Userinfo in it is sent as basic authentication.
	URL string
	// Secret is the signing secret: "whsec_" followed by base64 (the
	// Standard Webhooks format), or a raw string; at least 16 bytes either
	// way.
	Secret string
	// Timeout bounds each request (default 10s).
	Timeout time.Duration
	// Client sends the requests. The default one follows no redirect.
	Client *http.Client
}

// Webhook is a Sink that POSTs each event alone, in order, to an HTTP
// endpoint, signed per the Standard Webhooks specification; any 2xx
// response acknowledges the event.
type Webhook struct {
	url     string
	host    string // what errors may say of the endpoint
	key     []byte
	timeout time.Duration
	client  *http.Client
	own     bool // client was made here, so Close may close its connections
	secrets []string
	now     func() time.Time
}

// NewWebhook validates cfg and returns the sink. It returns an error if the
// URL is not an absolute http or https URL, or if the secret is missing,
// malformed ("whsec_" without valid base64) or shorter than 16 bytes.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, errors.New("webhook: URL does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("webhook: URL must be an absolute http or https URL")
	}
	key, err := webhookKey(cfg.Secret)
	if err != nil {
		return nil, err
	}
	w := &Webhook{
		url:     cfg.URL,
		host:    u.Scheme + "://" + u.Host,
		key:     key,
		timeout: cfg.Timeout,
		client:  cfg.Client,
		secrets: webhookSecrets(cfg.Secret, u),
		now:     time.Now,
	}
	if w.timeout <= 0 {
		w.timeout = DefaultWebhookTimeout
	}
	if w.client == nil {
		w.own = true
		w.client = &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return w, nil
}

// webhookKey decodes a secret into the HMAC key; it returns an error if the
// secret is malformed or too short.
func webhookKey(secret string) ([]byte, error) {
	key := []byte(secret)
	if rest, ok := strings.CutPrefix(secret, whsecPrefix); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(rest); err != nil {
			return nil, errors.New("webhook: secret has the whsec_ prefix but no valid base64 after it")
		}
	}
	if len(key) < minWebhookKey {
		return nil, fmt.Errorf("webhook: secret must be at least %d bytes", minWebhookKey)
	}
	return key, nil
}

// webhookSecrets lists what an error text must not show: the secret, and
// the URL's userinfo and query.
func webhookSecrets(secret string, u *url.URL) []string {
	secrets := []string{secret, u.RawQuery, u.Query().Encode()}
	if u.User != nil {
		secrets = append(secrets, u.User.String(), u.User.Username())
		if pass, ok := u.User.Password(); ok {
			secrets = append(secrets, pass)
		}
	}
	return secrets
}

// Name returns "webhook".
func (w *Webhook) Name() string { return "webhook" }

// Close closes the idle connections of the sink's own client. It always
// returns nil.
func (w *Webhook) Close() error {
	if w.own {
		w.client.CloseIdleConnections()
	}
	return nil
}

// Publish POSTs msgs one at a time, in order, and stops at the first one
// that is not acknowledged with a 2xx status. It returns how many leading
// messages were acknowledged and, if not all were, an error naming the
// refused event and the status or transport failure. The error names
// neither the secret nor the URL's userinfo, path or query.
func (w *Webhook) Publish(ctx context.Context, msgs []Message) (int, error) {
	for i, m := range msgs {
		if err := ctx.Err(); err != nil {
			return i, fmt.Errorf("webhook: stopped before event %s: %w", m.ID, err)
		}
		if err := w.post(ctx, m); err != nil {
			return i, fmt.Errorf("POST event %s to %s: %w", m.ID, w.host, redact(err, w.secrets))
		}
	}
	return len(msgs), nil
}

// post sends one signed message and returns nil on a 2xx response.
func (w *Webhook) post(parent context.Context, m Message) error {
	ctx, cancel := context.WithTimeout(parent, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(m.Body))
	if err != nil {
		return errors.New("cannot build the request")
	}
	ts := w.now().Unix()
	req.Header.Set("Content-Type", cloudEventsContentType)
	req.Header.Set("User-Agent", "lakehold-catalog")
	req.Header.Set(WebhookIDHeader, m.ID)
	// Delivery is idempotent by id; the header also lets net/http resend
	// on a pooled connection that the server had closed meanwhile.
	req.Header.Set("Idempotency-Key", m.ID)
	req.Header.Set(WebhookTimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(WebhookSignatureHeader, signWebhook(w.key, m.ID, ts, m.Body))
	resp, err := w.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its text would repeat the URL
		}
		if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			err = fmt.Errorf("no response within %s: %w", w.timeout, err)
		}
		return err
	}
	// Drain a little so that the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// signWebhook returns the webhook-signature value: "v1," and the base64 of
// HMAC-SHA256 over id.timestamp.body.
func signWebhook(key []byte, id string, ts int64, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(webhookMAC(key, id, ts, body))
}

// webhookMAC is the HMAC-SHA256 of id.timestamp.body under key.
func webhookMAC(key []byte, id string, ts int64, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	return mac.Sum(nil)
}

// VerifyWebhook checks a received webhook as its consumer would: the
// headers are those of the Standard Webhooks specification, secret is in
// the form WebhookConfig accepts, and the timestamp may differ from now by
// at most tolerance (DefaultWebhookTolerance if tolerance <= 0). It
// returns nil if one of the v1 signatures matches (compared in constant
// time); otherwise an error wrapping ErrWebhookHeaders, ErrWebhookTimestamp
// or ErrWebhookSignature, or the error of an invalid secret.
func VerifyWebhook(secret string, header http.Header, body []byte, tolerance time.Duration) error {
	key, err := webhookKey(secret)
	if err != nil {
		return err
	}
	id := header.Get(WebhookIDHeader)
	ts, err := strconv.ParseInt(header.Get(WebhookTimestampHeader), 10, 64)
	sigs := strings.Fields(strings.Join(header.Values(WebhookSignatureHeader), " "))
	if id == "" || err != nil || len(sigs) == 0 {
		return ErrWebhookHeaders
	}
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	if d := time.Since(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s is %s from now", ErrWebhookTimestamp, header.Get(WebhookTimestampHeader), d.Round(time.Second))
	}
	want := webhookMAC(key, id, ts, body)
	for _, sig := range sigs {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookSignature
}
