package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// The client's span: every traced request of the test continues it.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
	traceparent   = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// Secrets the test hands the catalog; none may become a span attribute.
const (
	traceS3Secret     = "s3-profile-secret-TRACE"
	traceVendedSecret = "vended-secret-TRACE"
	traceVendedToken  = "vended-session-token-TRACE"
)

// conflictOnce makes the next ObjectsSwap lose its race once armed.
type conflictOnce struct {
	store.Store
	armed atomic.Bool
}

func (c *conflictOnce) ObjectsSwap(ctx context.Context, swaps []store.Swap) error {
	if c.armed.CompareAndSwap(true, false) {
		return fmt.Errorf("%w: lost to a test", store.ErrConflict)
	}
	return c.Store.ObjectsSwap(ctx, swaps)
}

type tracedBundle struct {
	*bundle
	spans    *tracetest.SpanRecorder
	logs     *syncBuffer
	svc      *service.Service
	conflict *conflictOnce
	root     string // holds the warehouse's directory and s3meta, where s3t's metadata is
}

// tracedSetup starts a catalog with every seam traced into a span
// recorder, as cmd/catalog wires it: authentication on (built-in tokens),
// an S3 storage profile whose STS is a stub, a file:// warehouse.
func tracedSetup(t *testing.T) *tracedBundle {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	conflict := &conflictOnce{Store: openStore(t, "sqlite")}
	st := store.WithTracing(conflict, tp, store.SystemSQLite)
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{5}, 32))
	require.NoError(t, err)
	mint := func(context.Context, *credentials.S3Profile, string, string, string, time.Duration) (vending.Minted, error) {
		return vending.Minted{AccessKeyID: "ASIATRACE", SecretAccessKey: traceVendedSecret, SessionToken: traceVendedToken, Expires: time.Now().Add(time.Hour)}, nil
	}
	vendors := vending.Multi{S3: vending.NewS3(sealer).WithMint(mint, time.Now), GCS: vending.NewGCS(sealer, nil)}
	vending.WithTracerProvider(tp)(&vendors)
	var svc *service.Service
	builtin, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: bytes.Repeat([]byte{6}, 32),
		Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc.Admin().PrincipalGeneration(ctx, name)
		})})
	require.NoError(t, err)
	svc = service.New(st, storage.NewProvider(storage.WithTracerProvider(tp)), service.Options{
		Logger: log, Tokens: builtin, Sealer: sealer, Credentials: vendors, TracerProvider: tp, VerifyMetadataOnLoad: true})
	root := t.TempDir()
	dir := filepath.Join(root, "warehouse")
	_, err = svc.CreateWarehouse(localCtx(), "wh", "file://"+dir, map[string]string{"allowed-locations": "s3://warehouse,file://" + filepath.Join(root, "s3meta")})
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log, Auth: authn.New(builtin, nil), TracerProvider: tp}))
	t.Cleanup(hs.Close)
	return &tracedBundle{bundle: &bundle{url: hs.URL, warehouse: "file://" + dir, store: st, client: hs.Client()},
		spans: rec, logs: logs, svc: svc, conflict: conflict, root: root}
}

// TestCommitSpanTree: a table commit whose first swap loses a race yields,
// in the client's trace, the server span (a child of the client's span)
// with two commit attempts under it, each with its database and storage
// spans; no secret, token or local path is in any span.
func TestCommitSpanTree(t *testing.T) {
	b := tracedSetup(t)
	creds, err := b.svc.Admin().CreatePrincipal(localCtx(), "etl")
	require.NoError(t, err)
	tok := (&authBundle{bundle: b.bundle}).accessToken(t, creds.ClientID, creds.ClientSecret)
	auth := []string{"Authorization", "Bearer " + tok}
	r := b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}, auth...)
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)}, auth...)
	require.Equal(t, 200, r.status, "%s", r.body)

	b.conflict.armed.Store(true)
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("k", "v"), append(auth, "traceparent", traceparent)...)
	require.Equal(t, 200, r.status, "%s", r.body)

	srv := onlySpan(t, b.spans.Ended(), "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", clientTraceID)
	require.Equal(t, trace.SpanKindServer, srv.SpanKind())
	require.Equal(t, clientSpanID, srv.Parent().SpanID().String(), "the client's span is the parent")
	require.True(t, srv.Parent().IsRemote())
	require.Equal(t, int64(200), attr(srv, "http.response.status_code").AsInt64())
	require.Equal(t, r.header.Get("X-Request-ID"), attr(srv, "catalog.request_id").AsString())

	attempts := childrenNamed(b.spans.Ended(), srv, "commit.attempt")
	require.Len(t, attempts, 2)
	for i, want := range []string{"conflict_retry", "committed"} {
		a := attempts[i]
		require.Equal(t, int64(i+1), attr(a, "catalog.commit.attempt").AsInt64())
		require.Equal(t, want, attr(a, "catalog.commit.outcome").AsString())
		require.Equal(t, codes.Unset, a.Status().Code, "a lost race is not a failure")
		swap := childrenNamed(b.spans.Ended(), a, "store.ObjectsSwap")
		require.Len(t, swap, 1, "attempt %d", i+1)
		require.Equal(t, "sqlite", attr(swap[0], "db.system.name").AsString())
		require.Equal(t, "ObjectsSwap", attr(swap[0], "db.operation.name").AsString())
		write := childrenNamed(b.spans.Ended(), a, "storage.write")
		require.Len(t, write, 1, "attempt %d writes its metadata file", i+1)
		require.Equal(t, "file", attr(write[0], "storage.scheme").AsString())
		require.False(t, hasAttr(write[0], "storage.bucket"), "a local path has no bucket")
	}
	lost := childrenNamed(b.spans.Ended(), attempts[0], "store.ObjectsSwap")[0]
	require.Equal(t, codes.Error, lost.Status().Code)
	require.Equal(t, "conflict", lost.Status().Description, "the class only, not the error's text")
	require.Len(t, childrenNamed(b.spans.Ended(), attempts[0], "storage.delete"), 1, "the lost attempt's file is removed")

	// A vended load: the STS call is a span, the credentials are not in it.
	r = b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"role-arn": "arn:aws:iam::000000000000:role/Trace", "access-key-id": "catalog", "secret-access-key": traceS3Secret}, auth...)
	require.Equal(t, 200, r.status, "%s", r.body)
	registerTracedS3Table(t, b, auth)
	r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/s3t", nil, append(auth, "traceparent", traceparent, "X-Iceberg-Access-Delegation", "vended-credentials")...)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Contains(t, string(r.body), traceVendedSecret, "the stub's credentials were vended")
	load := onlySpan(t, b.spans.Ended(), "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", clientTraceID)
	sts := childrenNamed(b.spans.Ended(), load, "sts.AssumeRole")
	require.Len(t, sts, 1)
	require.Equal(t, "aws", attr(sts[0], "cloud.provider").AsString())

	// A 401 is noted with its ErrorModel type and is not a server failure.
	r = b.do(t, "GET", "/v1/config", nil, "traceparent", traceparent)
	require.Equal(t, 401, r.status)
	denied := onlySpan(t, b.spans.Ended(), "GET /v1/config", clientTraceID)
	require.Equal(t, "NotAuthorizedException", attr(denied, "error.type").AsString())
	require.Equal(t, codes.Unset, denied.Status().Code)

	requireNoSecrets(t, b.spans.Ended(), tok, creds.ClientSecret, traceS3Secret, traceVendedSecret, traceVendedToken, b.root, "file://")
}

// TestRequestLogsCarryTraceIDs: with tracing on, the access log line of a
// request carries the trace and span ids of its server span; health
// probes make no spans; with tracing off no line has them.
func TestRequestLogsCarryTraceIDs(t *testing.T) {
	b := tracedSetup(t)
	r := b.do(t, "GET", "/v1/config", nil, "traceparent", traceparent)
	require.Equal(t, 401, r.status)
	srv := onlySpan(t, b.spans.Ended(), "GET /v1/config", clientTraceID)
	line := requestLine(t, b.logs.String(), r.header.Get("X-Request-ID"))
	require.Equal(t, clientTraceID, line["trace_id"])
	require.Equal(t, srv.SpanContext().SpanID().String(), line["span_id"])

	require.Equal(t, 200, b.do(t, "GET", "/healthz", nil).status)
	for _, s := range b.spans.Ended() {
		require.NotContains(t, s.Name(), "healthz")
	}

	logs := &syncBuffer{}
	st := openStore(t, "sqlite")
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: slog.Default()})
	hs := httptest.NewServer(server.New(svc, server.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))}))
	t.Cleanup(hs.Close)
	off := &bundle{url: hs.URL, client: hs.Client()}
	r = off.do(t, "GET", "/v1/config", nil, "traceparent", traceparent)
	line = requestLine(t, logs.String(), r.header.Get("X-Request-ID"))
	require.NotContains(t, line, "trace_id", "tracing off: no trace ids")
}

// registerTracedS3Table registers table s3t, located on S3, from a
// metadata file written into the warehouse directory.
func registerTracedS3Table(t *testing.T, b *tracedBundle, auth []string) {
	t.Helper()
	meta := map[string]any{"format-version": 2, "table-uuid": "0d6c6f4e-51b1-4d8e-9a43-6f7b1f0c2a11", "location": "s3://warehouse/ns/s3t",
		"last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 1, "current-schema-id": 0,
		"schemas":         []any{map[string]any{"type": "struct", "schema-id": 0, "fields": []any{map[string]any{"id": 1, "name": "id", "type": "long", "required": true}}}},
		"partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}}, "default-spec-id": 0, "last-partition-id": 999,
		"sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}}, "default-sort-order-id": 0}
	data, err := json.Marshal(meta)
	require.NoError(t, err)
	path := filepath.Join(b.root, "s3meta", "00000-x.metadata.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "s3t", "metadata-location": "file://" + path}, auth...)
	require.Equal(t, 200, r.status, "%s", r.body)
}

// onlySpan is the one ended span named name in trace traceID.
func onlySpan(t *testing.T, spans []sdktrace.ReadOnlySpan, name, traceID string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name && s.SpanContext().TraceID().String() == traceID {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans named %q in the client's trace", name)
	return found[0]
}

// childrenNamed are the spans named name whose parent is parent, in the
// order they started.
func childrenNamed(spans []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name && s.Parent().SpanID() == parent.SpanContext().SpanID() {
			out = append(out, s)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].StartTime().Before(out[j-1].StartTime()); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func hasAttr(s sdktrace.ReadOnlySpan, key string) bool {
	return attr(s, key).Type() != attribute.EMPTY
}

// requireNoSecrets fails when a span's name, status or attribute holds
// any of the secrets.
func requireNoSecrets(t *testing.T, spans []sdktrace.ReadOnlySpan, secrets ...string) {
	t.Helper()
	require.NotEmpty(t, spans)
	for _, s := range spans {
		texts := []string{s.Name(), s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key), kv.Value.String())
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.String())
			}
		}
		for _, txt := range texts {
			for _, secret := range secrets {
				require.NotContains(t, txt, secret, "span %s", s.Name())
			}
		}
	}
}

// requestLine is the access log line of the request with id.
func requestLine(t *testing.T, logs, id string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" && m["request_id"] == id {
			return m
		}
	}
	t.Fatalf("no request line for %s in:\n%s", id, logs)
	return nil
}
