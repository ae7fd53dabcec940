package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("https response error StatusCode: %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

type codeErr string

func (e codeErr) Error() string     { return "api error " + string(e) }
func (e codeErr) ErrorCode() string { return string(e) }

// TestUnavailable: errors that mean "not now" (a retry later may succeed)
// are told from refusals.
func TestUnavailable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("blob (key %q) (code=Unknown): %w", "k", err) }
	for _, err := range []error{
		wrap(statusErr(503)), wrap(statusErr(500)), wrap(statusErr(429)),
		wrap(codeErr("SlowDown")), wrap(codeErr("InternalError")),
		wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
		wrap(context.DeadlineExceeded), wrap(io.ErrUnexpectedEOF), wrap(syscall.ECONNRESET),
		&fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC},
		&fs.PathError{Op: "write", Path: "/x", Err: syscall.EDQUOT},
		errors.Join(wrap(statusErr(503)), errors.New("retry quota exceeded, 0 available, 5 requested")),
	} {
		if !Unavailable(err) {
			t.Errorf("Unavailable(%v) = false, want true", err)
		}
	}
	for _, err := range []error{
		nil, fs.ErrNotExist, wrap(statusErr(403)), wrap(codeErr("AccessDenied")), ErrRefused, ErrIsDirectory,
		&fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES},
	} {
		if Unavailable(err) {
			t.Errorf("Unavailable(%v) = true, want false", err)
		}
	}
}

// TestS3ReadTimeout: with WithS3ReadTimeout an S3 request into a server
// that never answers fails (Unavailable) instead of hanging: the SDK
// exempts S3 from read timeouts and iceberg-go's IO has no deadline.
func TestS3ReadTimeout(t *testing.T) {
	t.Setenv("AWS_MAX_ATTEMPTS", "2")
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-release // a blackhole: the request arrived, no answer comes
	}))
	defer srv.Close()
	defer close(release)
	props := map[string]string{"s3.endpoint": srv.URL, "s3.region": "us-east-1",
		"s3.access-key-id": "k", "s3.secret-access-key": "s"}
	io, err := NewProvider(WithS3ReadTimeout(300*time.Millisecond)).For(context.Background(), "s3://bucket/wh", props)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- io.Write(context.Background(), "s3://bucket/wh/t/metadata/00001-x.metadata.json", []byte("{}"))
	}()
	select {
	case err := <-done:
		if err == nil || !Unavailable(err) {
			t.Fatalf("Write into a blackhole: %v, want an Unavailable error", err)
		}
		t.Logf("gave up after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(20 * time.Second):
		t.Fatal("Write into a blackhole still running after 20 s: no read timeout")
	}
}
