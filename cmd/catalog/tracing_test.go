package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP receiver: it keeps every span POSTed to
// /v1/traces with the service.name of its resource.
type collector struct {
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, receivedSpan{service, s})
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) received() []receivedSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]receivedSpan(nil), c.spans...)
}

// syncWriter is a bytes.Buffer safe for serve's logger and the test.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncWriter) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeExportsSpans runs `catalog serve` with tracing on, once through
// --otlp-endpoint and once through OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (and
// OTEL_SERVICE_NAME), against an in-process OTLP/HTTP receiver. The
// spans of a request arrive once serve has stopped (its shutdown flushes
// them; the batch delay is longer than the test), continuing the client's
// traceparent, and the request's log line carries the trace id.
func TestServeExportsSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     bool
		service string
	}{{"flag", false, "lakehold"}, {"env", true, "lakehold-test"}} {
		t.Run(tc.name, func(t *testing.T) {
			col := &collector{}
			hs := httptest.NewServer(col)
			defer hs.Close()
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_SDK_DISABLED", "OTEL_TRACES_SAMPLER", "CATALOG_OTLP_ENDPOINT"} {
				t.Setenv(k, "")
			}
			args := []string{"serve", "--data-dir", filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0"}
			if tc.env {
				t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", hs.URL+"/v1/traces")
				t.Setenv("OTEL_SERVICE_NAME", tc.service)
			} else {
				args = append(args, "--otlp-endpoint", hs.URL)
			}
			logs := runServeBriefly(t, args, func(url string) {
				req, err := http.NewRequest("POST", url+"/v1/default/namespaces", strings.NewReader(`{"namespace":["traced"]}`))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, 200, resp.StatusCode)
			})
			var server, child *tracepb.Span
			for _, s := range col.received() {
				require.Equal(t, tc.service, s.service)
				switch s.span.Name {
				case "POST /v1/{prefix}/namespaces":
					server = s.span
				case "store.NamespaceCreate":
					child = s.span
				}
			}
			require.NotNil(t, server, "the request's span arrived: %v", col.received())
			require.NotNil(t, child, "its database span arrived")
			require.Equal(t, "0af7651916cd43dd8448eb211c80319c", hexID(server.TraceId))
			require.Equal(t, "b7ad6b7169203331", hexID(server.ParentSpanId))
			require.Equal(t, server.SpanId, child.ParentSpanId)
			require.Contains(t, logs, `"trace_id":"0af7651916cd43dd8448eb211c80319c"`)
			require.Contains(t, logs, "tracing on")
		})
	}
}

// runServeBriefly runs serve with args until use, given its URL, returns;
// then stops it as SIGTERM would and returns its log.
func runServeBriefly(t *testing.T, args []string, use func(url string)) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prev := serveContext
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { serveContext = prev }()
	logs := &syncWriter{}
	done := make(chan error, 1)
	go func() { done <- run(args, io.Discard, logs) }()
	url := ""
	for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); {
		for _, l := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "catalog listening" {
				url, _ = m["url"].(string)
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped early: %v\n%s", err, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NotEmpty(t, url, "serve did not start:\n%s", logs.String())
	use(url)
	cancel()
	require.NoError(t, <-done)
	return logs.String()
}

func hexID(b []byte) string { return hex.EncodeToString(b) }

// TestServeOTLPEndpointFlag: --otlp-endpoint is documented, and a URL that
// is not http(s) is refused before anything is opened.
func TestServeOTLPEndpointFlag(t *testing.T) {
	var help bytes.Buffer
	_ = run([]string{"serve", "--help"}, &help, &help)
	for _, s := range []string{"-otlp-endpoint", "CATALOG_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		require.Contains(t, help.String(), s)
	}
	for _, bad := range []string{"collector:4318", "grpc://collector:4317", "http://"} {
		dir := filepath.Join(t.TempDir(), "data")
		var errb bytes.Buffer
		err := run([]string{"serve", "--data-dir", dir, "--otlp-endpoint", bad}, &errb, &errb)
		require.ErrorContains(t, err, "--otlp-endpoint", bad)
		_, statErr := os.Stat(dir)
		require.True(t, os.IsNotExist(statErr), "data dir created before the refusal of %s", bad)
	}
}
