// Package storage reads, writes and deletes catalog-owned files (metadata
// JSON) in a warehouse's object store: local files, S3 and GCS, through
// apache/iceberg-go's FileIO implementations. Every location must pass
// storagepath.Normalize (an absolute file, s3, gs, abfss or wasbs URI without ".."), so the
// catalog never opens a relative path, and Delete never removes a directory.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud" // registers s3://, gs:// (and more) FileIO factories
	s3io "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/utils"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/storagepath"
)

// ErrNotExist is returned by Read when the file is missing.
var ErrNotExist = fs.ErrNotExist

// ErrRefused is returned (wrapped) for a location the catalog never
// touches: relative, with "..", or of an unsupported scheme.
var ErrRefused = errors.New("location refused")

// ErrIsDirectory is returned by Delete for a directory.
var ErrIsDirectory = errors.New("refusing to delete a directory")

// PathFree strips the path from a file-system error, for logs.
func PathFree(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// check refuses a location that does not normalise. The error names the
// reason, not the location.
func check(loc string) error {
	if _, err := storagepath.Normalize(loc); err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return nil
}

// FileIO is what the catalog needs from an object store.
type FileIO interface {
	// Read returns the whole file; an error wrapping ErrNotExist when missing.
	Read(ctx context.Context, location string) ([]byte, error)
	// Write creates or replaces the file.
	Write(ctx context.Context, location string, data []byte) error
	// Delete removes the file; deleting a missing file is not an error,
	// deleting a directory is (ErrIsDirectory).
	Delete(ctx context.Context, location string) error
	// Exists reports whether the file is there.
	Exists(ctx context.Context, location string) (bool, error)
	// Open returns the file for ranged reads (ReadAt, Seek, Stat); an error
	// wrapping ErrNotExist when missing.
	Open(ctx context.Context, location string) (icebergio.File, error)
	// Copy streams the file at src to dst (created or replaced) without
	// holding it in memory; an error wrapping ErrNotExist when src is
	// missing. dst is left incomplete or absent when Copy fails.
	Copy(ctx context.Context, src, dst string) error
}

// maxCachedIOs bounds a Provider's cache of configured IOs.
const maxCachedIOs = 256

// Provider hands out a FileIO for a location, configured with the
// warehouse's storage properties. IOs are cached per bucket and properties,
// at most maxCachedIOs of them.
type Provider struct {
	mu            sync.Mutex
	cache         map[string]icebergio.IO
	s3ReadTimeout time.Duration
	tracer        trace.Tracer // nil: no spans (traced.go)
}

// Option configures a Provider.
type Option func(*Provider)

// WithS3ReadTimeout bounds how long an S3 request may go without receiving
// a byte (a rolling window: a slow but progressing transfer survives)
// before it fails; the SDK then retries it (3 attempts in all). The AWS
// SDK exempts S3 from read timeouts, and iceberg-go's IO runs every call
// on a context without deadline, so without this bound a request into a
// blackholed or stalled connection never returns. 0 leaves the SDK
// default (no bound).
func WithS3ReadTimeout(d time.Duration) Option { return func(p *Provider) { p.s3ReadTimeout = d } }

// NewProvider returns an empty Provider.
func NewProvider(opts ...Option) *Provider {
	p := &Provider{cache: map[string]icebergio.IO{}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// For returns a FileIO for location. props are iceberg FileIO properties
// (s3.endpoint, s3.access-key-id, ...). It fails when the scheme is not
// supported, the location is refused (ErrRefused) or the IO cannot be
// configured.
func (p *Provider) For(ctx context.Context, location string, props map[string]string) (FileIO, error) {
	if err := check(location); err != nil {
		return nil, err
	}
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("invalid location %q: %w", location, err)
	}
	// An Azure IO is bound to its container, the location's user part.
	key := u.Scheme + "://" + u.User.String() + "@" + u.Host + "|" + fingerprint(props)
	p.mu.Lock()
	io, ok := p.cache[key]
	p.mu.Unlock()
	if !ok {
		// The IO outlives this request (it is cached): it must not carry
		// the request's cancellation.
		loadCtx := context.WithoutCancel(ctx)
		if p.s3ReadTimeout > 0 && (u.Scheme == "s3" || u.Scheme == "s3a") {
			if loadCtx, err = p.withS3Config(loadCtx, props); err != nil {
				return nil, fmt.Errorf("storage for %s: %w", location, err)
			}
		}
		io, err = icebergio.LoadFS(loadCtx, props, location)
		if err != nil {
			return nil, fmt.Errorf("storage for %s: %w", location, err)
		}
		p.mu.Lock()
		if len(p.cache) >= maxCachedIOs {
			// Keys change when credentials do (a rotated secret, a renewed
			// SAS): drop an arbitrary entry rather than grow for ever.
			for k := range p.cache {
				delete(p.cache, k)
				break
			}
		}
		p.cache[key] = io
		p.mu.Unlock()
	}
	if p.tracer != nil {
		return p.traced(fileIO{io}, u.Scheme, u.Host), nil
	}
	return fileIO{io}, nil
}

// withS3Config returns ctx carrying the AWS config iceberg-go would build
// from props (ParseAWSConfig, which its S3 IO then takes from the context
// instead), with the read timeout on its HTTP client. Without a proxy or
// connect timeout in props iceberg-go would use its tuned default client;
// that one is built here the same way.
func (p *Provider) withS3Config(ctx context.Context, props map[string]string) (context.Context, error) {
	cfg, err := s3io.ParseAWSConfig(ctx, props)
	if err != nil {
		return nil, err
	}
	hc, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
	if !ok || hc == nil {
		hc = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = 256, 256, 2048
			t.IdleConnTimeout = 90 * time.Second
		})
	}
	cfg.HTTPClient = hc.WithReadTimeout(p.s3ReadTimeout)
	return utils.WithAwsConfig(ctx, cfg), nil
}

// Unavailable reports whether err, from a storage call, means the store
// could not do it now, as opposed to refusing it: a timeout or a cut or
// refused connection, an answer 5xx or 429 (SlowDown, InternalError,
// ServiceUnavailable), or a full disk or quota. A retry later may succeed.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		if c := status.HTTPStatusCode(); c >= 500 || c == http.StatusTooManyRequests {
			return true
		}
	}
	var code interface{ ErrorCode() string }
	if errors.As(err, &code) {
		switch code.ErrorCode() {
		case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "ServiceUnavailable", "InternalError":
			return true
		}
	}
	var timeout interface{ Timeout() bool }
	var netErr *net.OpError
	return errors.As(err, &timeout) && timeout.Timeout() ||
		errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func fingerprint(props map[string]string) string {
	keys := slices.Sorted(maps.Keys(props))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(props[k])
		b.WriteByte(0)
	}
	return b.String()
}

type fileIO struct{ io icebergio.IO }

func (f fileIO) Read(_ context.Context, location string) ([]byte, error) {
	if err := check(location); err != nil {
		return nil, err
	}
	if r, ok := f.io.(icebergio.ReadFileIO); ok {
		return r.ReadFile(location)
	}
	file, err := f.io.Open(location)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	_, err = file.ReadAt(buf, 0)
	return buf, err
}

func (f fileIO) Open(_ context.Context, location string) (icebergio.File, error) {
	if err := check(location); err != nil {
		return nil, err
	}
	return f.io.Open(location)
}

func (f fileIO) Write(_ context.Context, location string, data []byte) error {
	if err := check(location); err != nil {
		return err
	}
	w, ok := f.io.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage for %s is read-only", location)
	}
	return w.WriteFile(location, data)
}

func (f fileIO) Copy(_ context.Context, src, dst string) (err error) {
	if err := check(src); err != nil {
		return err
	}
	if err := check(dst); err != nil {
		return err
	}
	w, ok := f.io.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage for %s is read-only", dst)
	}
	in, err := f.io.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := w.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// Delete stats first: a directory is refused (os.Remove would take an
// empty one), and a missing file is skipped before Remove, whose
// object-store fallback would delete a directory marker of that name.
func (f fileIO) Delete(_ context.Context, location string) error {
	if err := check(location); err != nil {
		return err
	}
	if st, ok := f.io.(icebergio.StatIO); ok {
		info, err := st.Stat(location)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.IsDir() {
			return ErrIsDirectory
		}
	}
	err := f.io.Remove(location)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (f fileIO) Exists(_ context.Context, location string) (bool, error) {
	if err := check(location); err != nil {
		return false, err
	}
	if st, ok := f.io.(icebergio.StatIO); ok {
		_, err := st.Stat(location)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	file, err := f.io.Open(location)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	file.Close()
	return true, nil
}

// IcebergIO returns the underlying iceberg-go IO for location, for code
// that reads manifests with iceberg-go (purge).
func (p *Provider) IcebergIO(ctx context.Context, location string, props map[string]string) (icebergio.IO, error) {
	f, err := p.For(ctx, location, props)
	if err != nil {
		return nil, err
	}
	if t, ok := f.(tracedIO); ok {
		return t.io, nil
	}
	return f.(fileIO).io, nil
}
