package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/eventsink"
	"github.com/lakehold/catalog/service"
)

// natsBroker is a real nats-server with JetStream, run in-process from its
// Go module, on a fixed port and store directory so that it can restart.
type natsBroker struct {
	t    *testing.T
	opts *natsserver.Options
	srv  *natsserver.Server
}

func newNATSBroker(t *testing.T) *natsBroker {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	b := &natsBroker{t: t, opts: &natsserver.Options{ServerName: "events-test", Host: "127.0.0.1", Port: port,
		JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *natsBroker) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", b.opts.Port) }

func (b *natsBroker) start() {
	srv, err := natsserver.NewServer(b.opts.Clone())
	require.NoError(b.t, err)
	go srv.Start()
	require.True(b.t, srv.ReadyForConnections(20*time.Second))
	b.srv = srv
}

func (b *natsBroker) stop() {
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		b.srv = nil
	}
}

// streamIDs reads the event ids of the stream, in stream order.
func (b *natsBroker) streamIDs(t *testing.T) []string {
	nc, err := nats.Connect(b.url())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, eventsink.DefaultNATSStream)
	if err != nil {
		return nil
	}
	info, err := st.Info(ctx)
	require.NoError(t, err)
	var ids []string
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		require.NoError(t, err)
		var ce map[string]any
		require.NoError(t, json.Unmarshal(m.Data, &ce))
		require.Equal(t, m.Header.Get("Nats-Msg-Id"), ce["id"])
		ids = append(ids, ce["id"].(string))
	}
	return ids
}

// webhookReceiver verifies each delivery's signature and records the
// CloudEvents in arrival order; fail makes it answer 503 that many times.
type webhookReceiver struct {
	mu     sync.Mutex
	secret string
	fail   int
	got    []map[string]any
	bad    int
}

func (w *webhookReceiver) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := eventsink.VerifyWebhook(w.secret, r.Header, body, time.Minute); err != nil {
		w.bad++
		rw.WriteHeader(http.StatusUnauthorized)
		return
	}
	if w.fail > 0 {
		w.fail--
		rw.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var ce map[string]any
	_ = json.Unmarshal(body, &ce)
	w.got = append(w.got, ce)
	rw.WriteHeader(http.StatusNoContent)
}

// firstSeen is the ids received, each once, in the order first received
// (at least once: a retried delivery may arrive twice).
func (w *webhookReceiver) firstSeen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	var ids []string
	for _, ce := range w.got {
		id := ce["id"].(string)
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// allEventIDs lists the ids of the warehouse's events once there are n.
func (b *bundle) allEventIDs(t *testing.T, n int) []string {
	var ids []string
	for _, e := range b.eventsN(t, map[string]any{"page-size": 1000}, n).Events {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestEventsDelivered: with a NATS JetStream sink and a signed webhook
// configured, every event reaches both, in commit order, through a
// webhook that fails for a while and a broker that restarts; JetStream
// de-duplicates by event id, so the stream holds each event once.
func TestEventsDelivered(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			broker := newNATSBroker(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			natsSink, err := eventsink.NewNATS(ctx, eventsink.NATSConfig{URL: broker.url(), CreateStream: true, Timeout: 2 * time.Second})
			require.NoError(t, err)
			t.Cleanup(func() { _ = natsSink.Close() })
			recv := &webhookReceiver{secret: "a-test-secret-of-32-characters!!", fail: 3}
			hook := httptest.NewServer(recv)
			t.Cleanup(hook.Close)
			whSink, err := eventsink.NewWebhook(eventsink.WebhookConfig{URL: hook.URL + "/hook", Secret: recv.secret})
			require.NoError(t, err)

			b := setupEvents(t, backend, false, service.EventOptions{Sinks: []eventsink.Sink{natsSink, whSink}, Source: "https://catalog.test"})
			b.startJobs(t)
			require.NoError(t, b.store.EnqueueJobs(context.Background(), b.svc.Events().Jobs()...))
			b.createNamespace(t, "ns")
			for _, n := range []string{"a", "b"} {
				require.Equal(t, 200, b.createTable(t, "ns", n, nil).status)
			}
			commit := func(i int) {
				r := b.do(t, "POST", fmt.Sprintf("/v1/wh/namespaces/ns/tables/%s", []string{"a", "b"}[i%2]), map[string]any{
					"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"n": fmt.Sprint(i)}}}})
				require.Equal(t, 200, r.status, "%s", r.body)
			}
			for i := range 10 {
				commit(i)
			}
			want := b.allEventIDs(t, 13)
			require.Len(t, want, 13)
			waitFor(t, func() bool { return len(recv.firstSeen()) == len(want) && len(broker.streamIDs(t)) == len(want) })
			require.Equal(t, want, recv.firstSeen(), "webhook: every event, in commit order")
			require.Equal(t, want, broker.streamIDs(t), "NATS: every event once, in commit order")
			require.Zero(t, recv.bad, "every delivery was signed")
			ce := recv.got[len(recv.got)-1]
			require.Equal(t, "1.0", ce["specversion"])
			require.Equal(t, "https://catalog.test", ce["source"])
			require.Equal(t, "io.lakehold.catalog.update-table", ce["type"])
			require.Equal(t, "wh/ns/b", ce["subject"])
			require.Equal(t, want[len(want)-1], ce["data"].(map[string]any)["event-id"])

			// The broker goes away while commits go on, then comes back:
			// nothing is lost, nothing is stored twice, the order holds.
			broker.stop()
			for i := 10; i < 15; i++ {
				commit(i)
			}
			time.Sleep(time.Second) // delivery attempts fail meanwhile
			broker.start()
			want = b.allEventIDs(t, 18)
			require.Len(t, want, 18)
			waitFor(t, func() bool { return len(broker.streamIDs(t)) >= len(want) && len(recv.firstSeen()) == len(want) })
			require.Equal(t, want, broker.streamIDs(t))
			require.Equal(t, want, recv.firstSeen())
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "not delivered within 60 s")
		time.Sleep(100 * time.Millisecond)
	}
}
