package storage

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTracedIO: with a tracer provider every call under a recording span
// is a span naming the scheme (and an object store's bucket), never the
// path; a missing file is noted, a refused location fails with its class;
// IcebergIO still reaches the underlying IO.
func TestTracedIO(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	p := NewProvider(WithTracerProvider(tp))
	dir := t.TempDir()
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	io, err := p.For(ctx, "file://"+dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	loc := "file://" + filepath.Join(dir, "m.json")
	if err := io.Write(ctx, loc, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Read(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if err := io.Delete(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Read(ctx, loc); !errors.Is(err, ErrNotExist) {
		t.Fatalf("read of a deleted file: %v", err)
	}
	if _, err := io.Exists(ctx, "file://relative/../x"); !errors.Is(err, ErrRefused) {
		t.Fatalf("refused location: %v", err)
	}
	parent.End()
	if _, err := p.IcebergIO(ctx, "file://"+dir, nil); err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, s := range rec.Ended() {
		if s.Name() == "request" {
			continue
		}
		names = append(names, s.Name())
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the request", s.Name())
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), dir) || kv.Key == attrBucket {
				t.Errorf("%s: attribute %s=%s", s.Name(), kv.Key, kv.Value.String())
			}
		}
		if got := attrOf(s, attrScheme); got != "file" {
			t.Errorf("%s: scheme %q", s.Name(), got)
		}
	}
	if got := strings.Join(names, ","); got != "storage.write,storage.read,storage.delete,storage.read,storage.exists" {
		t.Fatalf("spans %s", got)
	}
	spans := rec.Ended()
	if missing := spans[3]; missing.Status().Code != codes.Unset || attrOf(missing, "error.type") != "not_found" {
		t.Errorf("missing file: status %v, error.type %q", missing.Status(), attrOf(missing, "error.type"))
	}
	if refused := spans[4]; refused.Status().Code != codes.Error || refused.Status().Description != "refused" {
		t.Errorf("refused location: status %v", refused.Status())
	}
	where := p.traced(fileIO{}, "s3", "lake").(tracedIO).where
	if len(where) != 2 || where[1] != attrBucket.String("lake") {
		t.Errorf("s3 attributes %v", where)
	}
}

func attrOf(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}
