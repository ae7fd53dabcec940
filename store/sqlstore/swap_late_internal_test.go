package sqlstore

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
)

// swapFixture is a table object in a fresh Postgres database, a store
// opened on it with the given options, and a direct connection for the
// test's own statements.
type swapFixture struct {
	st     *Store
	obj    *store.Object
	direct *pgx.Conn
}

func newSwapFixture(t *testing.T, dsn, directDSN string, opts ...Option) *swapFixture {
	t.Helper()
	ctx := context.Background()
	st, err := OpenPostgres(ctx, dsn, true, opts...)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///wh"}))
	_, err = st.NamespaceCreate(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	o := &store.Object{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable,
		Location: "file:///wh/ns/t", MetadataLocation: "m0", Metadata: []byte(`{}`), FormatVersion: 2}
	require.NoError(t, st.ObjectCreate(ctx, o))
	direct, err := pgx.Connect(ctx, directDSN)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close(context.Background()) })
	return &swapFixture{st: st, obj: o, direct: direct}
}

func (f *swapFixture) swap(ctx context.Context, from, to string) error {
	return f.st.ObjectsSwap(ctx, []store.Swap{{ObjectID: f.obj.ID, ExpectedMetadataLocation: from,
		NewMetadataLocation: to, NewMetadata: []byte(`{"v":1}`), NewFormatVersion: 2}})
}

func (f *swapFixture) pointer(t *testing.T) string {
	t.Helper()
	var loc string
	require.NoError(t, f.direct.QueryRow(context.Background(),
		`SELECT metadata_location FROM catalog_objects WHERE id = $1`, f.obj.ID).Scan(&loc))
	return loc
}

// TestSwapPastItsBoundIsUnknown: a swap that waits on a row lock past the
// swap bound was sent and may still land (it does, once the lock goes), so
// it must be ErrOutcomeUnknown — never ErrUnavailable, which tells the
// commit engine that nothing landed and makes it delete the new metadata
// file the pointer then names. Both the single-statement swap and the
// transaction (COMMIT) path are checked.
func TestSwapPastItsBoundIsUnknown(t *testing.T) {
	for _, fencedTx := range []bool{false, true} {
		name := map[bool]string{false: "alone", true: "transaction"}[fencedTx]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dsn := pgtest.NewDatabase(t)
			// The bound is long enough for the statement to reach the
			// server under a loaded make check; the test waits for it.
			f := newSwapFixture(t, dsn, dsn, WithSwapTimeout(3*time.Second))
			tx, err := f.direct.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `SELECT 1 FROM catalog_objects WHERE id = $1 FOR UPDATE`, f.obj.ID)
			require.NoError(t, err)
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if fencedTx {
				// An index row forces the explicit transaction, whose UPDATE
				// blocks before COMMIT: the request's own deadline cuts it.
				sctx, cancel = context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
			}
			done := make(chan error, 1)
			go func() { done <- f.swapWith(sctx, fencedTx) }()
			f.waitOnLock(t, done)
			err = <-done
			if fencedTx {
				// Inside a transaction, the request's own deadline cut the
				// UPDATE before COMMIT: nothing can land, 503 is right.
				require.ErrorIs(t, err, store.ErrUnavailable)
				require.NoError(t, tx.Commit(ctx))
				time.Sleep(500 * time.Millisecond) // the orphaned backend gets its turn
				require.Equal(t, "m0", f.pointer(t), "an interrupted transaction never lands")
				return
			}
			require.ErrorIs(t, err, store.ErrOutcomeUnknown, "a sent swap past its bound: %v", err)
			require.NotErrorIs(t, err, store.ErrUnavailable)
			require.NoError(t, tx.Commit(ctx))
			// pgx sends a cancel request when it gives up, which may or may
			// not reach the statement before the lock goes (through a bad
			// link it does not, and the swap lands: the case the old
			// classification answered 503 for). Either state is possible,
			// which is why the answer is "unknown".
			time.Sleep(300 * time.Millisecond)
			require.Contains(t, []string{"m0", "m1"}, f.pointer(t))
		})
	}
}

// waitOnLock waits (up to 30 s) until the store's UPDATE waits on a row
// lock, failing at once if the swap returned instead.
func (f *swapFixture) waitOnLock(t *testing.T, done chan error) {
	t.Helper()
	waiting := func() bool {
		var n int
		_ = f.direct.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock'`).Scan(&n)
		return n >= 1
	}
	for deadline := time.Now().Add(30 * time.Second); !waiting(); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("the swap returned (%v) instead of waiting on the row lock", err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "the swap waits on the row lock")
	}
}

// swapWith swaps m0→m1 alone or, with tx, inside an explicit transaction
// (an index row makes ObjectsSwap take that path).
func (f *swapFixture) swapWith(ctx context.Context, tx bool) error {
	sw := store.Swap{ObjectID: f.obj.ID, ExpectedMetadataLocation: "m0", NewMetadataLocation: "m1",
		NewMetadata: []byte(`{"v":1}`), NewFormatVersion: 2}
	if tx {
		sw.Index = []store.IndexedLeaf{{Leaf: "leaf-1.parquet", Lineage: "leaf-1.parquet", Locations: []string{"data/a.parquet"}}}
	}
	return f.st.ObjectsSwap(ctx, []store.Swap{sw})
}

// lateProxy forwards TCP connections to a target. After hold(), the next
// connection to send a request has its answers held until release(): one
// stalled connection, while every other one flows.
type lateProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	armed bool
	held  []chan struct{}
}

func newLateProxy(t *testing.T, target string) *lateProxy {
	p := &lateProxy{}
	p.ln = serveProxy(t, target, func(c, up net.Conn) {
		var gate atomic.Pointer[chan struct{}]
		go p.requests(c, up, &gate)
		go p.answers(c, up, &gate)
	})
	t.Cleanup(p.release)
	return p
}

// requests copies the client's bytes to the server; the first write after
// hold() closes this connection's gate.
func (p *lateProxy) requests(c, up net.Conn, gate *atomic.Pointer[chan struct{}]) {
	defer up.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.armed {
				p.armed = false
				g := make(chan struct{})
				p.held = append(p.held, g)
				gate.Store(&g)
			}
			p.mu.Unlock()
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// answers copies the server's bytes to the client, waiting while the gate
// is closed.
func (p *lateProxy) answers(c, up net.Conn, gate *atomic.Pointer[chan struct{}]) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			if g := gate.Load(); g != nil {
				<-*g
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *lateProxy) hold() {
	p.mu.Lock()
	p.armed = true
	p.mu.Unlock()
}

func (p *lateProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.held {
		close(g)
	}
	p.held = nil
}

// TestSwapAnsweredLateIsResolvedByReread: the swap reaches Postgres and
// lands at once, but its answer is stalled past the swap bound. The store
// re-reads the pointer on a fresh connection, finds its own new location
// there and reports success instead of an unknown outcome.
func TestSwapAnsweredLateIsResolvedByReread(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newLateProxy(t, u.Host)
	via := *u
	via.Host = proxy.ln.Addr().String()
	// Exec mode sends the whole statement in one round trip, so the held
	// connection carries the UPDATE itself (no prepare whose answer the
	// hold would stall first); the re-read runs on another connection.
	q := via.Query()
	q.Set("default_query_exec_mode", "exec")
	via.RawQuery = q.Encode()
	f := newSwapFixture(t, via.String(), dsn, WithSwapTimeout(500*time.Millisecond), WithMaxConns(4))
	proxy.hold()
	start := time.Now()
	err = f.swap(ctx, "m0", "m1")
	proxy.release()
	require.NoError(t, err, "the re-read should prove that the late swap landed")
	require.Equal(t, "m1", f.pointer(t))
	require.Less(t, time.Since(start), 10*time.Second)
}
