package storage

import (
	"context"
	"errors"
	"io/fs"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakehold/catalog/internal/tracing"
)

// WithTracerProvider makes every FileIO call a span (storage.read,
// storage.write, storage.delete, storage.exists, storage.open) under the
// request's span, naming the scheme and, for object stores, the bucket:
// never the object key or a local path. nil: no spans.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(p *Provider) { p.tracer = tracing.Tracer(tp) }
}

// Span attribute keys of storage calls.
const (
	attrScheme = attribute.Key("storage.scheme")
	attrBucket = attribute.Key("storage.bucket")
)

// tracedIO is a FileIO whose calls are spans.
type tracedIO struct {
	fileIO
	tracer trace.Tracer
	where  []attribute.KeyValue
}

// traced wraps io for the location's scheme and bucket (host).
func (p *Provider) traced(io fileIO, scheme, bucket string) FileIO {
	where := []attribute.KeyValue{attrScheme.String(scheme)}
	if bucket != "" && scheme != "file" {
		where = append(where, attrBucket.String(bucket))
	}
	return tracedIO{fileIO: io, tracer: p.tracer, where: where}
}

func (t tracedIO) start(ctx context.Context, op string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	return tracing.Child(ctx, t.tracer, "storage."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(t.where...))
}

// end ends span with a fixed class for err: the error's own text can
// carry paths, bucket keys and SDK request details.
func end(span trace.Span, err error) {
	if span == nil {
		return
	}
	label := ""
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, ErrRefused):
		label = "refused"
	case errors.Is(err, ErrIsDirectory):
		label = "is_directory"
	case Unavailable(err):
		label = "unavailable"
	default:
		label = "error"
	}
	if errors.Is(err, fs.ErrNotExist) {
		span.SetAttributes(attribute.String("error.type", "not_found"))
	}
	tracing.End(span, label)
}

func (t tracedIO) Read(ctx context.Context, location string) ([]byte, error) {
	ctx, span := t.start(ctx, "read")
	b, err := t.fileIO.Read(ctx, location)
	end(span, err)
	return b, err
}

func (t tracedIO) Write(ctx context.Context, location string, data []byte) error {
	ctx, span := t.start(ctx, "write")
	err := t.fileIO.Write(ctx, location, data)
	end(span, err)
	return err
}

func (t tracedIO) Delete(ctx context.Context, location string) error {
	ctx, span := t.start(ctx, "delete")
	err := t.fileIO.Delete(ctx, location)
	end(span, err)
	return err
}

func (t tracedIO) Exists(ctx context.Context, location string) (bool, error) {
	ctx, span := t.start(ctx, "exists")
	ok, err := t.fileIO.Exists(ctx, location)
	end(span, err)
	return ok, err
}

func (t tracedIO) Copy(ctx context.Context, src, dst string) error {
	ctx, span := t.start(ctx, "copy")
	err := t.fileIO.Copy(ctx, src, dst)
	end(span, err)
	return err
}

// Open is a span for the open (a stat on object stores); the ranged reads
// that follow on the file are not traced one by one.
func (t tracedIO) Open(ctx context.Context, location string) (icebergio.File, error) {
	ctx, span := t.start(ctx, "open")
	f, err := t.fileIO.Open(ctx, location)
	end(span, err)
	return f, err
}
