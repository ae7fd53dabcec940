package eventsink

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// natsServer is an in-process nats-server with JetStream that can be
// stopped and started again on the same port and store directory.
type natsServer struct {
	t    *testing.T
	opts *server.Options
	srv  *server.Server
}

// newNATSServer configures a server on a free loopback port; edit, if not
// nil, adjusts its options (authentication). It is not started.
func newNATSServer(t *testing.T, edit func(*server.Options)) *natsServer {
	t.Helper()
	opts := &server.Options{
		ServerName: "eventsink-test",
		Host:       "127.0.0.1",
		Port:       freePort(t),
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoLog:      true,
		NoSigs:     true,
	}
	if edit != nil {
		edit(opts)
	}
	ns := &natsServer{t: t, opts: opts}
	t.Cleanup(ns.stop)
	return ns
}

// startNATSServer configures and starts a server.
func startNATSServer(t *testing.T, edit func(*server.Options)) *natsServer {
	ns := newNATSServer(t, edit)
	ns.start()
	return ns
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (ns *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", ns.opts.Port) }

func (ns *natsServer) start() {
	ns.t.Helper()
	srv, err := server.NewServer(ns.opts.Clone())
	require.NoError(ns.t, err)
	go srv.Start()
	require.True(ns.t, srv.ReadyForConnections(20*time.Second), "nats-server did not start")
	ns.srv = srv
}

func (ns *natsServer) stop() {
	if ns.srv != nil {
		ns.srv.Shutdown()
		ns.srv.WaitForShutdown()
		ns.srv = nil
	}
}

// client connects a plain JetStream client, as a consumer would.
func (ns *natsServer) client(opts ...nats.Option) jetstream.JetStream {
	ns.t.Helper()
	nc, err := nats.Connect(ns.url(), opts...)
	require.NoError(ns.t, err)
	ns.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(ns.t, err)
	return js
}

func newTestNATS(t *testing.T, cfg NATSConfig) *NATS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := NewNATS(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testMessages(from, n int) []Message {
	ops := []string{"create-table", "update-table", "x-lakehold.undrop-table", "drop table*>"}
	msgs := make([]Message, n)
	for i := range msgs {
		id := fmt.Sprintf("evt-%04d", from+i)
		msgs[i] = Message{
			ID:        id,
			Operation: ops[(from+i)%len(ops)],
			Body:      []byte(fmt.Sprintf(`{"specversion":"1.0","id":%q}`, id)),
		}
	}
	return msgs
}

// readStream consumes every message of stream with an ordered consumer.
func readStream(t *testing.T, js jetstream.JetStream, stream string) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	want := int(info.State.Msgs)
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	var got []jetstream.Msg
	for len(got) < want && ctx.Err() == nil {
		batch, err := cons.Fetch(want-len(got), jetstream.FetchMaxWait(2*time.Second))
		require.NoError(t, err)
		for m := range batch.Messages() {
			got = append(got, m)
		}
	}
	require.Len(t, got, want)
	return got
}

func streamIDs(t *testing.T, js jetstream.JetStream, stream string) []string {
	t.Helper()
	var ids []string
	for _, m := range readStream(t, js, stream) {
		ids = append(ids, m.Headers().Get(jetstream.MsgIDHeader))
	}
	return ids
}

func messageIDs(msgs []Message) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids
}

func TestNATSPublishesInOrderWithHeadersAndDeduplicates(t *testing.T) {
	ns := startNATSServer(t, nil)
	sink := newTestNATS(t, NATSConfig{URL: ns.url(), CreateStream: true})
	assert.Equal(t, "nats", sink.Name())
	ctx := context.Background()

	msgs := testMessages(0, 8)
	n, err := sink.Publish(ctx, msgs)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)

	js := ns.client()
	got := readStream(t, js, DefaultNATSStream)
	require.Len(t, got, len(msgs))
	for i, m := range got {
		assert.Equal(t, DefaultNATSSubject+"."+natsToken(msgs[i].Operation), m.Subject())
		assert.Equal(t, msgs[i].ID, m.Headers().Get("Nats-Msg-Id"))
		assert.Equal(t, "application/cloudevents+json", m.Headers().Get("Content-Type"))
		assert.Equal(t, string(msgs[i].Body), string(m.Data()))
	}
	assert.Equal(t, "lakehold.events.x-lakehold_undrop-table", got[2].Subject())
	assert.Equal(t, "lakehold.events.drop_table__", got[3].Subject())

	// Resending (as Deliver does after a lost acknowledgement) is
	// acknowledged, but JetStream stores nothing twice.
	n, err = sink.Publish(ctx, append(msgs[3:], testMessages(8, 2)...))
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	assert.Equal(t, messageIDs(testMessages(0, 10)), streamIDs(t, js, DefaultNATSStream))

	n, err = sink.Publish(ctx, nil)
	assert.NoError(t, err)
	assert.Zero(t, n)
}

func TestNATSStopsAtTheFirstRefusedMessage(t *testing.T) {
	ns := startNATSServer(t, nil)
	js := ns.client()
	ctx := context.Background()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "EVENTS", Subjects: []string{"catalog.>"}, MaxMsgSize: 512,
	})
	require.NoError(t, err)
	sink := newTestNATS(t, NATSConfig{URL: ns.url(), Subject: "catalog", Stream: "EVENTS"})

	msgs := testMessages(0, 4)
	msgs[2].Body = []byte(strings.Repeat("x", 1024))
	n, err := sink.Publish(ctx, msgs)
	require.Error(t, err)
	assert.Equal(t, 2, n)
	t.Logf("error: %v", err)
	assert.Contains(t, err.Error(), "evt-0002")
	assert.Equal(t, messageIDs(msgs[:2]), streamIDs(t, js, "EVENTS"))
}

func TestNATSRefusesAStreamThatDoesNotCaptureTheSubject(t *testing.T) {
	ns := startNATSServer(t, nil)
	_, err := ns.client().CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "OTHER", Subjects: []string{"lakehold.events.>"},
	})
	require.NoError(t, err)
	// The subject is captured, but by another stream than the one
	// configured: refused rather than stored where no one looks.
	sink := newTestNATS(t, NATSConfig{URL: ns.url(), Timeout: 2 * time.Second})
	n, err := sink.Publish(context.Background(), testMessages(0, 1))
	require.Error(t, err)
	assert.Zero(t, n)
}

// publishUntilDone resends the rest of msgs, as successive Deliver calls
// would, until all are acknowledged or the deadline passes.
func publishUntilDone(t *testing.T, sink Sink, msgs []Message, deadline time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for {
		n, err := sink.Publish(ctx, msgs)
		msgs = msgs[n:]
		if err == nil {
			return
		}
		require.NoError(t, ctx.Err(), "still failing: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}

func TestNATSHealsAfterABrokerRestart(t *testing.T) {
	const password = "pw-Zq8xV1c9"
	ns := startNATSServer(t, func(o *server.Options) {
		o.Username, o.Password = "catalog", password
	})
	const timeout = 2 * time.Second
	sink := newTestNATS(t, NATSConfig{
		URL: ns.url(), User: "catalog", Password: password,
		CreateStream: true, Timeout: timeout,
	})
	ctx := context.Background()
	first, second := testMessages(0, 5), testMessages(5, 5)
	n, err := sink.Publish(ctx, first)
	require.NoError(t, err)
	require.Equal(t, 5, n)

	ns.stop()
	start := time.Now()
	n, err = sink.Publish(ctx, second)
	require.Error(t, err)
	assert.Zero(t, n)
	assert.Less(t, time.Since(start), timeout+3*time.Second)
	t.Logf("error: %v", err)
	assert.NotContains(t, err.Error(), password)

	// Same port and store: the client reconnects on its own. Its cursor
	// not having moved, Deliver would resend the first batch too.
	ns.start()
	publishUntilDone(t, sink, append(slices.Clone(first), second...), 30*time.Second)
	js := ns.client(nats.UserInfo("catalog", password))
	assert.Equal(t, messageIDs(append(first, second...)), streamIDs(t, js, DefaultNATSStream))
}

func TestNATSStartsWhileTheBrokerIsDown(t *testing.T) {
	ns := newNATSServer(t, nil)
	sink := newTestNATS(t, NATSConfig{URL: ns.url(), CreateStream: true, Timeout: time.Second})
	n, err := sink.Publish(context.Background(), testMessages(0, 2))
	require.Error(t, err)
	assert.Zero(t, n)
	t.Logf("error: %v", err)
	assert.Contains(t, err.Error(), "not connected")

	ns.start()
	publishUntilDone(t, sink, testMessages(0, 2), 30*time.Second)
	assert.Equal(t, messageIDs(testMessages(0, 2)), streamIDs(t, ns.client(), DefaultNATSStream))
}

func TestNATSErrorsNameNoCredentials(t *testing.T) {
	const token = "tok-8d7f6e5a4b3c"
	ns := startNATSServer(t, func(o *server.Options) { o.Authorization = "the-right-token" })
	for name, cfg := range map[string]NATSConfig{
		"token":        {URL: ns.url(), Token: token},
		"URL token":    {URL: strings.Replace(ns.url(), "//", "//"+token+"@", 1)},
		"URL userinfo": {URL: strings.Replace(ns.url(), "//", "//someone:"+token+"@", 1)},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Timeout = time.Second
			sink := newTestNATS(t, cfg)
			// Publish fails until the refusal has been recorded, and
			// none of the errors names the token.
			var err error
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				var n int
				n, err = sink.Publish(context.Background(), testMessages(0, 1))
				require.Error(t, err)
				assert.Zero(t, n)
				assert.NotContains(t, err.Error(), token)
				if strings.Contains(strings.ToLower(err.Error()), "authorization") {
					break
				}
			}
			t.Logf("error: %v", err)
			assert.Contains(t, strings.ToLower(err.Error()), "authorization")
		})
	}
}

func TestNATSAddsItsSubjectsToAnExistingStream(t *testing.T) {
	ns := startNATSServer(t, nil)
	js := ns.client()
	ctx := context.Background()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: DefaultNATSStream, Subjects: []string{"audit.>"}, MaxAge: time.Hour,
	})
	require.NoError(t, err)
	sink := newTestNATS(t, NATSConfig{URL: ns.url(), CreateStream: true})
	n, err := sink.Publish(ctx, testMessages(0, 1))
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	st, err := js.Stream(ctx, DefaultNATSStream)
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	assert.Equal(t, []string{"audit.>", "lakehold.events.>"}, cfg.Subjects)
	assert.Equal(t, time.Hour, cfg.MaxAge, "the operator's settings stay")

	// A stream that already covers the subjects is not updated.
	_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: DefaultNATSStream, Subjects: []string{"lakehold.>"}})
	require.NoError(t, err)
	newTestNATS(t, NATSConfig{URL: ns.url(), CreateStream: true})
	st, err = js.Stream(ctx, DefaultNATSStream)
	require.NoError(t, err)
	assert.Equal(t, []string{"lakehold.>"}, st.CachedInfo().Config.Subjects)
}

func TestNATSConfigValidation(t *testing.T) {
	ctx := context.Background()
	for name, cfg := range map[string]NATSConfig{
		"no URL":              {},
		"empty subject token": {URL: "nats://127.0.0.1:1", Subject: "a..b"},
		"wildcard subject":    {URL: "nats://127.0.0.1:1", Subject: "a.*"},
		"spaced subject":      {URL: "nats://127.0.0.1:1", Subject: "a b"},
		"dotted stream":       {URL: "nats://127.0.0.1:1", Stream: "A.B"},
		"two credentials":     {URL: "nats://127.0.0.1:1", Token: "t", User: "u", Password: "p"},
		"missing creds file":  {URL: "nats://127.0.0.1:1", CredsFile: "/nonexistent/x.creds"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := NewNATS(ctx, cfg)
			assert.Error(t, err)
			assert.Nil(t, s)
		})
	}
}

func TestNATSToken(t *testing.T) {
	for in, want := range map[string]string{
		"create-table":            "create-table",
		"x-lakehold.undrop-table": "x-lakehold_undrop-table",
		"a*b>c d\te\nf":           "a_b_c_d_e_f",
		"":                        "_",
	} {
		assert.Equal(t, want, natsToken(in), in)
	}
}

func TestSubjectsCover(t *testing.T) {
	const want = "lakehold.events.>"
	for subjects, covers := range map[string]bool{
		"lakehold.events.>":         true,
		"lakehold.>":                true,
		">":                         true,
		"*.events.>":                true,
		"lakehold.*.>":              true,
		"lakehold.events.*":         false,
		"lakehold.events":           false,
		"lakehold.events.x.>":       false,
		"other.>":                   false,
		"audit.> lakehold.events.>": true,
	} {
		assert.Equal(t, covers, subjectsCover(strings.Fields(subjects), want), subjects)
	}
}
