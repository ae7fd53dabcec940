package authn

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestOIDCFetchSpans: discovery is a span of its own at start-up, the JWKS
// fetch a child of the request that verified a token; both name the
// provider's host only, and the token is in neither.
func TestOIDCFetchSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ti := newTestIssuer(t)
	o, err := NewOIDC(context.Background(), OIDCConfig{Issuer: ti.srv.URL, Audience: "lakehold-catalog", TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	tok := sign(t, jose.RS256, ti.keys["k1"], "k1", map[string]any{"iss": ti.srv.URL, "sub": "alice", "aud": "lakehold-catalog", "exp": now + 300})
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := o.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	parent.End()

	u, _ := url.Parse(ti.srv.URL)
	spans := rec.Ended()
	if len(spans) != 3 || spans[0].Name() != "oidc.discovery" || spans[1].Name() != "oidc.jwks" {
		t.Fatalf("spans %v", spans)
	}
	if spans[0].Parent().IsValid() {
		t.Error("discovery runs at start-up, outside any request")
	}
	if spans[1].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("the JWKS fetch is not a child of the request")
	}
	for _, s := range spans[:2] {
		var host string
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), tok[:20]) || strings.Contains(kv.Value.String(), "/jwks") {
				t.Errorf("%s: attribute %s=%s", s.Name(), kv.Key, kv.Value.String())
			}
			if kv.Key == "server.address" {
				host = kv.Value.AsString()
			}
		}
		if host != u.Hostname() {
			t.Errorf("%s: server.address %q, want %q", s.Name(), host, u.Hostname())
		}
	}
}
