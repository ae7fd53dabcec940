package server_test

// Regression tests for the trust boundary (issue 9): bounded requests, name
// rules, 503 for an unavailable database, idempotency-key reuse and leases,
// and JSON storage profiles. Each case asserts status and Iceberg error
// type, on SQLite and Postgres, and that the server is healthy afterwards.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// boundsSetup starts a catalog over st with warehouse "wh" and cfg.
func boundsSetup(t *testing.T, st store.Store, cfg server.Config) (*bundle, *service.Service) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Sealer: sealer})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	if _, err := svc.GetWarehouse(context.Background(), "wh"); err != nil {
		_, err = svc.CreateWarehouse(context.Background(), "wh", loc, nil)
		require.NoError(t, err)
	}
	cfg.DefaultWarehouse, cfg.Logger = "wh", quiet
	hs := httptest.NewServer(server.New(svc, cfg))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client()}, svc
}

// wantError asserts status and Iceberg error type and returns the message.
func wantError(t *testing.T, r response, status int, typ string) string {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	gotType, msg := r.errorOf(t)
	require.Equal(t, typ, gotType, "%s", r.body)
	return msg
}

// requireHealthy checks that the server still serves reads and writes.
func requireHealthy(t *testing.T, b *bundle) {
	t.Helper()
	require.Equal(t, 200, b.do(t, "GET", "/healthz", nil).status)
	ns := fmt.Sprintf("healthy_%d", time.Now().UnixNano())
	b.createNamespace(t, ns)
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/"+ns, nil).status)
}

func TestBodyLimit(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, _ := boundsSetup(t, openStore(t, backend), server.Config{MaxRequestBody: 64 << 10})
			big := map[string]any{"namespace": []string{"big"}, "properties": map[string]string{"x": strings.Repeat("a", 100<<10)}}
			r := b.do(t, "POST", "/v1/wh/namespaces", big)
			msg := wantError(t, r, 413, "RequestEntityTooLargeException")
			require.Contains(t, msg, "65536 bytes")
			r = b.do(t, "POST", "/v1/wh/namespaces", big, "Idempotency-Key", "k-big")
			wantError(t, r, 413, "RequestEntityTooLargeException")

			// Without Content-Length the limit trips while decoding.
			data := `{"namespace":["big"],"properties":{"x":"` + strings.Repeat("a", 100<<10) + `"}}`
			req, err := http.NewRequest("POST", b.url+"/v1/wh/namespaces", io.MultiReader(strings.NewReader(data)))
			require.NoError(t, err)
			req.ContentLength = -1
			req.Header.Set("Content-Type", "application/json")
			resp, err := b.client.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantError(t, response{status: resp.StatusCode, body: body}, 413, "RequestEntityTooLargeException")

			wantError(t, b.do(t, "GET", "/v1/wh/namespaces/big", nil), 404, "NoSuchNamespaceException")
			r = b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"big"}}, "Idempotency-Key", "k-big")
			require.Equal(t, 200, r.status, "a refused body leaves its key unclaimed: %s", r.body)
			requireHealthy(t, b)
		})
	}
}

func TestDefaultBodyLimit(t *testing.T) {
	b, _ := boundsSetup(t, openStore(t, "sqlite"), server.Config{})
	big := map[string]any{"namespace": []string{"big"}, "properties": map[string]string{"x": strings.Repeat("a", 9<<20)}}
	wantError(t, b.do(t, "POST", "/v1/wh/namespaces", big), 413, "RequestEntityTooLargeException")
	requireHealthy(t, b)
}

// TestSlowClients: a client that trickles its headers or body is cut off
// by the read timeouts; oversized headers get 431.
func TestSlowClients(t *testing.T) {
	_, svc := boundsSetup(t, openStore(t, "sqlite"), server.Config{})
	hs := server.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 600 * time.Millisecond,
		MaxHeaderBytes: 8 << 10}.HTTPServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := ln.Addr().String()

	closedWithin := func(t *testing.T, partial string, limit time.Duration) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, partial)
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = io.Copy(io.Discard, c) // returns when the server closes
		require.NoError(t, err, "the server must close the connection, not leave it to our deadline")
		require.Less(t, time.Since(start), limit)
	}
	t.Run("slow headers", func(t *testing.T) {
		closedWithin(t, "GET /v1/config HTTP/1.1\r\nHost: x\r\n", 2*time.Second)
	})
	t.Run("slow body", func(t *testing.T) {
		closedWithin(t, "POST /v1/wh/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"names", 3*time.Second)
	})
	t.Run("huge headers", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, err = fmt.Fprintf(c, "GET /v1/config HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 64<<10))
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	})
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// nameCase is a request that breaks a name rule.
type nameCase struct {
	method, path string
	body         any
	rule         string // a word the message must contain
}

func nameCases() map[string]nameCase {
	long := strings.Repeat("n", 10000)
	nulToken := base64.RawURLEncoding.EncodeToString([]byte("a\x00"))
	deep := make([]string, 17)
	for i := range deep {
		deep[i] = "l"
	}
	tbl := func(name string) map[string]any {
		return map[string]any{"name": name, "schema": jsonRaw(testSchema)}
	}
	return map[string]nameCase{
		"level with 0x1F":         {"POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"a\x1fb"}}, "control character"},
		"level with NUL":          {"POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"a\x00b"}}, "control character"},
		"level with BEL":          {"POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"a", "b\a"}}, "control character"},
		"level with C1":           {"POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"a\u0085"}}, "control character"},
		"level too long":          {"POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{strings.Repeat("x", 256)}}, "limit is 255"},
		"namespace too deep":      {"POST", "/v1/wh/namespaces", map[string]any{"namespace": deep}, "limit is 16"},
		"namespace too long":      {"POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{strings.Repeat("x", 250), strings.Repeat("y", 250), strings.Repeat("z", 250), strings.Repeat("w", 250), strings.Repeat("v", 250)}}, "limit is 1024"},
		"NUL in namespace path":   {"GET", "/v1/wh/namespaces/a%00b", nil, "control characters"},
		"NUL in parent":           {"GET", "/v1/wh/namespaces?parent=a%2500b", nil, "control character"},
		"NUL in prefix":           {"GET", "/v1/w%00h/namespaces", nil, "control characters"},
		"NUL in config warehouse": {"GET", "/v1/config?warehouse=w%00h", nil, "control characters"},
		"bad UTF-8 in path":       {"GET", "/v1/wh/namespaces/a%FFb", nil, "UTF-8"},
		"NUL page token":          {"GET", "/v1/wh/namespaces?pageToken=" + nulToken, nil, "page token"},
		"table name too long":     {"POST", "/v1/wh/namespaces/ns/tables", tbl(long), "limit is 255"},
		"table name with NUL":     {"POST", "/v1/wh/namespaces/ns/tables", tbl("t\x00"), "control character"},
		"table name with 0x1F":    {"POST", "/v1/wh/namespaces/ns/tables", tbl("a\x1fb"), "control character"},
		"long table name in path": {"GET", "/v1/wh/namespaces/ns/tables/" + long, nil, "limit"},
		"NUL table name in path":  {"GET", "/v1/wh/namespaces/ns/tables/t%00", nil, "control characters"},
		"view name with newline":  {"POST", "/v1/wh/namespaces/ns/views", map[string]any{"name": "v\n"}, "control character"},
		"rename to control char": {"POST", "/v1/wh/tables/rename", map[string]any{
			"source": map[string]any{"namespace": []string{"ns"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"ns"}, "name": "t\x7f"}}, "control character"},
		"warehouse with control": {"POST", "/management/v1/warehouses", map[string]any{"name": "w\x01", "location": "file:///tmp/w"}, "warehouse name"},
	}
}

func TestNameRules(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, _ := boundsSetup(t, openStore(t, backend), server.Config{})
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
			for name, c := range nameCases() {
				r := b.do(t, c.method, c.path, c.body)
				msg := wantError(t, r, 400, "BadRequestException")
				require.Contains(t, msg, c.rule, name)
				require.Less(t, len(msg), 2000, "%s: the message must not echo unbounded input", name)
			}
			// ["a\x1fb"] was refused, so ["a","b"] is not a back door to it.
			wantError(t, b.do(t, "GET", "/v1/wh/namespaces/a%1Fb", nil), 404, "NoSuchNamespaceException")
			// At the limits everything works. (Names are renamed into place:
			// a new table's directory is "<name>-<uuid>", which a 255-byte
			// name would push past the file system's name limit.)
			lvl := strings.Repeat("é", 127) + "x" // 255 bytes
			b.createNamespace(t, lvl)
			deep := []string{"d"}
			for len(deep) < service.MaxNamespaceDepth {
				deep = append(deep, fmt.Sprint(len(deep)))
				b.createNamespace(t, deep[:len(deep)-1]...)
			}
			b.createNamespace(t, deep...)
			long := strings.Repeat("t", 255)
			r := b.do(t, "POST", "/v1/wh/tables/rename", map[string]any{
				"source": map[string]any{"namespace": []string{"ns"}, "name": "t"}, "destination": map[string]any{"namespace": []string{lvl}, "name": long}})
			require.Equal(t, 204, r.status, "%s", r.body)
			r = b.do(t, "GET", "/v1/wh/namespaces/"+url.PathEscape(lvl)+"/tables/"+long, nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			requireHealthy(t, b)
		})
	}
}

// TestIdempotencyKeyReuse: a key reused with another body or route is a
// 422, and the second change does not run.
func TestIdempotencyKeyReuse(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, _ := boundsSetup(t, openStore(t, backend), server.Config{})
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
			key := "01890a5d-ac96-774b-bcce-b302099a8058"
			first := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("x", "1"), "Idempotency-Key", key)
			require.Equal(t, 200, first.status, "%s", first.body)
			r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("y", "2"), "Idempotency-Key", key)
			msg := wantError(t, r, 422, "UnprocessableEntityException")
			require.Contains(t, msg, "different request body")
			require.NotContains(t, tableProps(t, b, "ns", "t"), "y", "the second change must not run")

			r = b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"other"}}, "Idempotency-Key", key)
			msg = wantError(t, r, 422, "UnprocessableEntityException")
			require.Contains(t, msg, "another operation")
			wantError(t, b.do(t, "GET", "/v1/wh/namespaces/other", nil), 404, "NoSuchNamespaceException")

			again := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("x", "1"), "Idempotency-Key", key)
			require.Equal(t, 200, again.status)
			require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
			wantError(t, b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"k"}}, "Idempotency-Key", "bad key"),
				400, "BadRequestException")
			requireHealthy(t, b)
		})
	}
}

// deadReplica is the store as seen by a replica that claims a key and then
// dies: its mutation fails and it never renews, finishes or releases.
type deadReplica struct{ store.Store }

func (deadReplica) NamespaceCreate(context.Context, string, []string, map[string]string) (*store.Namespace, error) {
	return nil, errors.New("replica died")
}
func (deadReplica) IdempotencyRenew(context.Context, string, string, time.Duration) error { return nil }
func (deadReplica) IdempotencyFinish(context.Context, *store.IdempotencyRecord) error     { return nil }
func (deadReplica) IdempotencyAbandon(context.Context, string, string) error              { return nil }

// TestIdempotencyDeadHolder: a key left in flight by a dead replica blocks
// a retry on another replica only until its lease runs out.
func TestIdempotencyDeadHolder(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			st := openStore(t, backend)
			lease := 1500 * time.Millisecond // long enough to send the impatient duplicate inside it
			dead, _ := boundsSetup(t, deadReplica{st}, server.Config{IdempotencyLease: lease})
			impatient, _ := boundsSetup(t, st, server.Config{IdempotencyLease: lease, IdempotencyWait: 50 * time.Millisecond})
			live, _ := boundsSetup(t, st, server.Config{IdempotencyLease: lease})
			body := map[string]any{"namespace": []string{"ns"}}
			r := dead.do(t, "POST", "/v1/wh/namespaces", body, "Idempotency-Key", "k-dead")
			require.Equal(t, 500, r.status, "%s", r.body)
			wantError(t, impatient.do(t, "POST", "/v1/wh/namespaces", body, "Idempotency-Key", "k-dead"), 503, "ServiceUnavailableException")
			start := time.Now()
			r = live.do(t, "POST", "/v1/wh/namespaces", body, "Idempotency-Key", "k-dead")
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Less(t, time.Since(start), 10*time.Second, "the retry proceeds after the lease, not after 30s")
			wantError(t, live.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"x"}}, "Idempotency-Key", "k-dead"),
				422, "UnprocessableEntityException")
			requireHealthy(t, live)
		})
	}
}

// diesAfterChange is a replica that commits its change and then dies
// before it can store the response.
type diesAfterChange struct{ store.Store }

func (diesAfterChange) IdempotencyRenew(context.Context, string, string, time.Duration) error {
	return nil
}
func (diesAfterChange) IdempotencyFinish(context.Context, *store.IdempotencyRecord) error { return nil }
func (diesAfterChange) IdempotencyAbandon(context.Context, string, string) error          { return nil }

// TestIdempotencyChangeWithoutResponse: the change and the key's mark are
// one transaction, so a retry of a request that changed the catalog but
// lost its response is told the outcome is unknown instead of running the
// change again.
func TestIdempotencyChangeWithoutResponse(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			st := openStore(t, backend)
			lease := 400 * time.Millisecond
			dying, _ := boundsSetup(t, diesAfterChange{st}, server.Config{IdempotencyLease: lease})
			live, _ := boundsSetup(t, st, server.Config{IdempotencyLease: lease})
			b := map[string]any{"namespace": []string{"ns"}}
			require.Equal(t, 200, dying.do(t, "POST", "/v1/wh/namespaces", b, "Idempotency-Key", "k-lost").status)
			r := live.do(t, "POST", "/v1/wh/namespaces", b, "Idempotency-Key", "k-lost")
			msg := wantError(t, r, 500, "CommitStateUnknownException")
			require.Contains(t, msg, "response was lost")
			require.Equal(t, 200, live.do(t, "GET", "/v1/wh/namespaces/ns", nil).status, "the first change stands, once")
			requireHealthy(t, live)
		})
	}
}

// slowReplica runs namespace creation slowly, as a long request would.
type slowReplica struct {
	store.Store
	delay time.Duration
}

func (s slowReplica) NamespaceCreate(ctx context.Context, wh string, levels []string, props map[string]string) (*store.Namespace, error) {
	time.Sleep(s.delay)
	return s.Store.NamespaceCreate(ctx, wh, levels, props)
}

// TestIdempotencyLiveHolder: a live holder renews its lease, so a duplicate
// arriving after several lease periods waits and replays, never runs twice.
func TestIdempotencyLiveHolder(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			st := openStore(t, backend)
			lease := 900 * time.Millisecond
			slow, _ := boundsSetup(t, slowReplica{st, 3 * lease}, server.Config{IdempotencyLease: lease})
			other, _ := boundsSetup(t, st, server.Config{IdempotencyLease: lease})
			body := map[string]any{"namespace": []string{"ns"}}
			var first response
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				first = slow.do(t, "POST", "/v1/wh/namespaces", body, "Idempotency-Key", "k-live")
			}()
			time.Sleep(2 * lease) // the first lease alone would have run out
			dup := other.do(t, "POST", "/v1/wh/namespaces", body, "Idempotency-Key", "k-live")
			wg.Wait()
			require.Equal(t, 200, first.status, "%s", first.body)
			require.Equal(t, 200, dup.status, "%s", dup.body)
			require.Equal(t, "true", dup.header.Get("Idempotent-Replayed"), "the duplicate replays instead of running")
			requireHealthy(t, other)
		})
	}
}

// TestStorageProfileIsJSON: management answers the profile as a JSON object
// without secrets.
func TestStorageProfileIsJSON(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, _ := boundsSetup(t, openStore(t, backend), server.Config{})
			profile := map[string]any{"type": "s3", "region": "us-east-1", "role-arn": "arn:aws:iam::000000000000:role/R",
				"access-key-id": "catalog", "secret-access-key": "very-secret-value"}
			for _, r := range []response{
				b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", profile),
				b.do(t, "GET", "/management/v1/warehouses/wh/storage-profile", nil),
			} {
				require.Equal(t, 200, r.status, "%s", r.body)
				got := r.json(t)
				require.Equal(t, "s3", got["type"], "%s", r.body)
				require.Equal(t, "us-east-1", got["region"])
				require.NotContains(t, string(r.body), "very-secret-value")
			}
			requireHealthy(t, b)
		})
	}
}

// TestSQLiteLockedIsUnavailable: a SQLite file locked by another writer
// beyond the busy timeout answers 503 with Retry-After; then works again.
func TestSQLiteLockedIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	st, err := sqlstore.OpenSQLite(context.Background(), path, sqlstore.WithBusyTimeout(300*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	b, _ := boundsSetup(t, st, server.Config{})
	other, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	require.NoError(t, err)

	r := b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}})
	msg := wantError(t, r, 503, "ServiceUnavailableException")
	require.NotEmpty(t, r.header.Get("Retry-After"))
	require.NotContains(t, msg, "SQLite")
	r = b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}, "Idempotency-Key", "k-locked")
	wantError(t, r, 503, "ServiceUnavailableException")

	_, err = conn.ExecContext(context.Background(), "ROLLBACK")
	require.NoError(t, err)
	r = b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}, "Idempotency-Key", "k-locked")
	require.Equal(t, 200, r.status, "%s", r.body)
	requireHealthy(t, b)
}

// pgCluster is a throwaway Postgres server this test can stop and start.
type pgCluster struct {
	root, url, bin string
	port           string
	as             []string
}

func startCluster(t *testing.T) *pgCluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		if os.Getenv("CATALOG_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatal("Postgres server binaries are missing but Postgres is required")
		}
		t.Skip("the outage test starts its own Postgres and needs /usr/lib/postgresql/*/bin")
	}
	cmd := exec.Command("../scripts/pg-start.sh")
	cmd.Env = append(os.Environ(), "PGPORT=27432")
	out, err := cmd.Output()
	require.NoError(t, err)
	c := &pgCluster{bin: filepath.Dir(bins[len(bins)-1])}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "PGROOT="); ok {
			c.root = v
		}
		if v, ok := strings.CutPrefix(line, "CATALOG_TEST_DATABASE_URL="); ok {
			c.url = v
		}
	}
	u, err := url.Parse(c.url)
	require.NoError(t, err)
	c.port = u.Port()
	if os.Getuid() == 0 {
		c.as = []string{"runuser", "-u", "postgres", "--"}
	}
	t.Cleanup(func() { _ = exec.Command("../scripts/pg-stop.sh", c.root).Run() })
	return c
}

func (c *pgCluster) pgCtl(t *testing.T, args ...string) {
	t.Helper()
	argv := append(append([]string{}, c.as...), append([]string{filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.root, "data")}, args...)...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func (c *pgCluster) stop(t *testing.T) { c.pgCtl(t, "-m", "immediate", "stop") }

func (c *pgCluster) start(t *testing.T) {
	c.pgCtl(t, "-l", filepath.Join(c.root, "server.log"), "-w", "-t", "60", "-o",
		"-p "+c.port+" -k "+c.root+" -c listen_addresses=127.0.0.1 -c fsync=off", "start")
}

// TestPostgresOutage: with the database stopped, loads, lists, creates and
// commits answer 503 ServiceUnavailableException (no driver text); after a
// restart everything works, including a retry with the same key.
func TestPostgresOutage(t *testing.T) {
	c := startCluster(t)
	t.Setenv("CATALOG_TEST_DATABASE_URL", c.url)
	// The cluster runs with synchronous_commit=off for speed; an immediate
	// stop would then lose the last commits, so this database asks for it.
	dsn := pgtest.NewDatabase(t) + "&synchronous_commit=on"
	st, err := sqlstore.OpenPostgres(context.Background(), dsn, true, sqlstore.WithAcquireTimeout(2*time.Second))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	b, _ := boundsSetup(t, st, server.Config{})
	b.createNamespace(t, "ns")
	require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)

	c.stop(t)
	down := map[string]response{
		"load table":       b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil),
		"load namespace":   b.do(t, "GET", "/v1/wh/namespaces/ns", nil),
		"list tables":      b.do(t, "GET", "/v1/wh/namespaces/ns/tables", nil),
		"create namespace": b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"n2"}}),
		"create table":     b.createTable(t, "ns", "t2", nil),
		"drop table":       b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t", nil),
		"commit":           b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("x", "1")),
		"keyed create":     b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"n3"}}, "Idempotency-Key", "k-out"),
	}
	for what, r := range down {
		msg := wantError(t, r, 503, "ServiceUnavailableException")
		require.NotEmpty(t, r.header.Get("Retry-After"), what)
		for _, leak := range []string{"SQLSTATE", "dial", "127.0.0.1", "connect", "postgres"} {
			require.NotContains(t, msg, leak, "%s: driver text leaked", what)
		}
	}

	c.start(t)
	// Pooled connections that died with the server may fail one request
	// each (503, retryable) before the pool replaces them.
	var r response
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil); r.status != 503 {
			break
		}
	}
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"n3"}}, "Idempotency-Key", "k-out")
	require.Equal(t, 200, r.status, "a 503 outcome is not stored: the retry runs: %s", r.body)
	require.Equal(t, 200, b.createTable(t, "ns", "t2", nil).status)
	require.Equal(t, 200, b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("x", "1")).status)
	requireHealthy(t, b)
}
