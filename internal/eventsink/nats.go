package eventsink

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of NATSConfig.
const (
	// DefaultNATSSubject is the default subject prefix.
	DefaultNATSSubject = "lakehold.events"
	// DefaultNATSStream is the default stream name.
	DefaultNATSStream = "LAKEHOLD_EVENTS"
	// DefaultNATSTimeout is the default connect, API and ack timeout.
	DefaultNATSTimeout = 5 * time.Second
)

// cloudEventsContentType is the media type of a structured CloudEvent.
const cloudEventsContentType = "application/cloudevents+json"

// NATSConfig configures the NATS JetStream sink.
type NATSConfig struct {
	// URL is the server URL, or a comma-separated list of them
	// ("nats://host:4222"). It may carry credentials as userinfo.
	URL string
	// Subject is the subject prefix (default "lakehold.events"); an event
	// is published to <Subject>.<operation>.
	Subject string
	// Stream is the JetStream stream that must capture <Subject>.> (default
	// "LAKEHOLD_EVENTS"); publishes are rejected if another stream does.
	Stream string
	// CreateStream makes the sink create the stream when it is missing, or
	// add <Subject>.> to its subjects when they do not cover it. Without
	// it the stream must be provisioned by the operator.
	CreateStream bool
	// Timeout bounds connecting, each JetStream API call and the wait for
	// each message's acknowledgement (default 5s).
	Timeout time.Duration

	// CredsFile is a NATS credentials file (user JWT and nkey seed).
	CredsFile string
	// Token is an authentication token.
	Token string
	// User and Password authenticate by user name and password.
	User     string
	Password string
}

// NATS is a Sink that publishes events to a NATS JetStream stream, one
// message per event, and counts a message as delivered once JetStream has
// stored it (its PubAck). Message ids become Nats-Msg-Id headers, so the
// stream drops the copies that at-least-once delivery resends within its
// duplicate window.
type NATS struct {
	cfg     NATSConfig
	nc      *nats.Conn
	js      jetstream.JetStream
	secrets []string

	mu      sync.Mutex // serialises ensureStream
	ensured bool       // the stream was found or made to capture the subjects

	errMu   sync.Mutex
	connErr error // why the connection was last lost or refused
}

// NewNATS validates cfg, fills in its defaults and connects. The
// connection retries for ever in the background, both when the servers
// cannot be reached at first and after losing them, so a broker restart
// heals by itself; meanwhile Publish fails fast. With CreateStream, the
// stream is ensured now if the server is reachable, else on the first
// Publish. NewNATS returns an error for an invalid configuration, an
// unreadable credentials file, or a reachable server that refuses to create
// or update the stream.
func NewNATS(ctx context.Context, cfg NATSConfig) (*NATS, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &NATS{cfg: cfg, secrets: natsSecrets(cfg)}
	opts, err := cfg.options(s.setConnErr)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to nats: %w", s.redact(err))
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(cfg.Timeout))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats jetstream: %w", s.redact(err))
	}
	s.nc, s.js = nc, js
	if cfg.CreateStream && nc.IsConnected() {
		if err := s.ensureStream(ctx); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return s, nil
}

// withDefaults returns cfg with its defaults filled in, or an error naming
// the first invalid field.
func (cfg NATSConfig) withDefaults() (NATSConfig, error) {
	cfg.URL = strings.TrimSpace(cfg.URL)
	if cfg.URL == "" {
		return cfg, errors.New("nats: URL is required")
	}
	if cfg.Subject == "" {
		cfg.Subject = DefaultNATSSubject
	}
	if cfg.Stream == "" {
		cfg.Stream = DefaultNATSStream
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultNATSTimeout
	}
	if !validSubjectPrefix(cfg.Subject) {
		return cfg, fmt.Errorf("nats: invalid subject %q: want dot-separated tokens without wildcards or whitespace", cfg.Subject)
	}
	if cfg.Stream != natsToken(cfg.Stream) || strings.ContainsAny(cfg.Stream, `/\`) {
		return cfg, fmt.Errorf("nats: invalid stream name %q", cfg.Stream)
	}
	auths := 0
	for _, set := range []bool{cfg.CredsFile != "", cfg.Token != "", cfg.User != "" || cfg.Password != ""} {
		if set {
			auths++
		}
	}
	if auths > 1 {
		return cfg, errors.New("nats: set only one of CredsFile, Token and User/Password")
	}
	return cfg, nil
}

// options are the connection options: reconnect for ever, including when
// the first connect fails, and buffer nothing while disconnected so that
// Publish fails at once rather than leaving messages to be flushed after
// their acknowledgement wait has given up.
// Connection failures are passed to onErr.
func (cfg NATSConfig) options(onErr func(error)) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name("lakehold-catalog event sink"),
		nats.Timeout(cfg.Timeout),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(time.Second),
		nats.ReconnectBufSize(-1),
		nats.PingInterval(20 * time.Second),
		nats.MaxPingsOutstanding(3),
		// Credentials may be rotated on the server: keep retrying them.
		nats.IgnoreAuthErrorAbort(),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { onErr(err) }),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { onErr(err) }),
		// The default error handler would print to stderr.
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { onErr(err) }),
	}
	switch {
	case cfg.CredsFile != "":
		if _, err := os.Stat(cfg.CredsFile); err != nil {
			return nil, fmt.Errorf("nats: credentials file: %w", err)
		}
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	case cfg.Token != "":
		opts = append(opts, nats.Token(cfg.Token))
	case cfg.User != "" || cfg.Password != "":
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	return opts, nil
}

// Name returns "nats".
func (s *NATS) Name() string { return "nats" }

// Close closes the connection. It always returns nil.
func (s *NATS) Close() error {
	s.nc.Close()
	return nil
}

// Publish publishes msgs one after the other, each to
// <Subject>.<operation>, waiting for each one's PubAck before sending the
// next: a pipeline could store a later message while an earlier one
// fails, and the resend would then reach the stream out of order. It
// returns how many leading messages JetStream stored (a duplicate it
// dropped counts as stored) and, if that is not all of them, an error
// saying why the next one was not: not connected, no acknowledgement
// within the timeout, or refused by the stream. The error names no
// credential.
func (s *NATS) Publish(ctx context.Context, msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	for i, m := range msgs {
		if err := s.publishOne(ctx, m); err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}

// ready checks the connection and, with CreateStream, that the stream has
// been ensured since it was last found missing.
func (s *NATS) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	if !s.nc.IsConnected() {
		err := fmt.Errorf("nats: not connected (%s)", strings.ToLower(s.nc.Status().String()))
		s.errMu.Lock()
		last := s.connErr
		s.errMu.Unlock()
		if last != nil {
			err = fmt.Errorf("%w: last error: %w", err, s.redact(last))
		}
		return err
	}
	if s.cfg.CreateStream {
		return s.ensureStream(ctx)
	}
	return nil
}

// setConnErr records why the connection was lost or refused.
func (s *NATS) setConnErr(err error) {
	if err != nil {
		s.errMu.Lock()
		s.connErr = err
		s.errMu.Unlock()
	}
}

// publishOne publishes m and waits for its PubAck.
func (s *NATS) publishOne(ctx context.Context, m Message) error {
	subject := s.cfg.Subject + "." + natsToken(m.Operation)
	msg := nats.NewMsg(subject)
	msg.Data = m.Body
	msg.Header.Set("Content-Type", cloudEventsContentType)
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(s.cfg.Stream)}
	if m.ID != "" {
		opts = append(opts, jetstream.WithMsgID(m.ID))
	}
	ackCtx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	_, err := s.js.PublishMsg(ackCtx, msg, opts...)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		err = fmt.Errorf("no acknowledgement within %s: %w", s.cfg.Timeout, err)
	case errors.Is(err, jetstream.ErrNoStreamResponse):
		// Nothing captured the subject: the stream may have been
		// deleted, so ensure it again before the next publish.
		s.mu.Lock()
		s.ensured = false
		s.mu.Unlock()
	}
	return fmt.Errorf("publish event %s to %s: %w", m.ID, subject, s.redact(err))
}

// ensureStream creates the stream if it is missing, or adds <Subject>.> to
// its subjects if they do not cover it; the rest of an existing stream's
// configuration is the operator's and is left alone.
func (s *NATS) ensureStream(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ensured {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	want := s.cfg.Subject + ".>"
	stream, err := s.js.Stream(ctx, s.cfg.Stream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		_, err = s.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        s.cfg.Stream,
			Description: "Lakehold catalog change events",
			Subjects:    []string{want},
			Storage:     jetstream.FileStorage,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another replica created it meanwhile: check it next time.
			return nil
		}
		if err != nil {
			return fmt.Errorf("nats: create stream %s: %w", s.cfg.Stream, s.redact(err))
		}
	case err != nil:
		return fmt.Errorf("nats: look up stream %s: %w", s.cfg.Stream, s.redact(err))
	default:
		cfg := stream.CachedInfo().Config
		if !subjectsCover(cfg.Subjects, want) {
			cfg.Subjects = append(cfg.Subjects, want)
			if _, err := s.js.UpdateStream(ctx, cfg); err != nil {
				return fmt.Errorf("nats: add subject %s to stream %s: %w", want, s.cfg.Stream, s.redact(err))
			}
		}
	}
	s.ensured = true
	return nil
}

// natsToken turns s into a single valid NATS subject token:
// '.', '*', '>', whitespace and control characters become '_', and an
// empty s becomes "_".
func natsToken(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, s)
}

// validSubjectPrefix says whether subject is a literal subject: non-empty
// tokens, none of which needed sanitising.
func validSubjectPrefix(subject string) bool {
	for _, tok := range strings.Split(subject, ".") {
		if tok == "" || tok != natsToken(tok) {
			return false
		}
	}
	return true
}

// subjectsCover says whether any of the stream subjects (which may hold
// wildcards) matches every subject that want (a "prefix.>" filter) does.
func subjectsCover(subjects []string, want string) bool {
	wt := strings.Split(want, ".")
	for _, s := range subjects {
		if filterCovers(strings.Split(s, "."), wt) {
			return true
		}
	}
	return false
}

// filterCovers says whether filter f matches every subject that filter w
// matches; tokens are already split.
func filterCovers(f, w []string) bool {
	for i, tok := range f {
		switch {
		case tok == ">":
			return i < len(w)
		case i >= len(w):
			return false
		case tok == "*":
			if w[i] == ">" {
				return false
			}
		case tok != w[i]:
			return false
		}
	}
	return len(f) == len(w)
}

// natsSecrets lists the credentials that an error text must not show: the
// configured ones and any userinfo in the server URLs.
func natsSecrets(cfg NATSConfig) []string {
	secrets := []string{cfg.Token, cfg.Password}
	for _, raw := range strings.Split(cfg.URL, ",") {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.User == nil {
			continue
		}
		if pass, ok := u.User.Password(); ok {
			secrets = append(secrets, u.User.String(), pass)
		} else {
			// A lone user name is a token ("nats://token@host").
			secrets = append(secrets, u.User.Username())
		}
	}
	return secrets
}

// redact returns err with every credential in its text replaced.
func (s *NATS) redact(err error) error { return redact(err, s.secrets) }

// redactedError is an error whose text had secrets removed; it still
// unwraps to the original, so errors.Is and errors.As keep working.
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns err, or a redactedError if its text contains one of
// secrets.
func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	for _, secret := range secrets {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, "REDACTED")
		}
	}
	if text == err.Error() {
		return err
	}
	return &redactedError{text: text, err: err}
}
