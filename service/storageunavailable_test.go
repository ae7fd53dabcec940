package service_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

// fakeS3 is an in-memory S3 stand-in (PUT, GET, HEAD, DELETE of objects)
// whose PUTs can be made to fail: answered 503 SlowDown, or never
// answered (a blackhole).
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	mode    atomic.Value // "", "slowdown" or "blackhole"
	release chan struct{}
}

func newFakeS3(t *testing.T) (*fakeS3, *httptest.Server) {
	f := &fakeS3{objects: map[string][]byte{}, release: make(chan struct{})}
	f.mode.Store("")
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(f.release) })
	return f, srv
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Path
	switch r.Method {
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		switch f.mode.Load() {
		case "slowdown":
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>r1</RequestId></Error>`)
			return
		case "blackhole":
			<-f.release
			return
		}
		f.mu.Lock()
		f.objects[key] = body
		f.mu.Unlock()
		w.Header().Set("ETag", `"`+strconv.Itoa(len(body))+`"`)
	case http.MethodGet, http.MethodHead:
		f.mu.Lock()
		body, ok := f.objects[key]
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			if r.Method == http.MethodGet {
				_, _ = io.WriteString(w, `<Error><Code>NoSuchKey</Code></Error>`)
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("ETag", `"`+strconv.Itoa(len(body))+`"`)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	case http.MethodDelete:
		f.mu.Lock()
		delete(f.objects, key)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotImplemented)
	}
}

// TestCommitWhenStorageIsUnavailable: a commit whose metadata file cannot
// be written because S3 answers 503 SlowDown, or does not answer at all,
// is a 503 ServiceUnavailable (nothing committed; retry later), not a 409
// conflict or a plain 500, names neither the endpoint nor S3's error, and
// the table commits again once S3 is back. The blackhole ends within the
// S3 read timeout (without one it never ends).
func TestCommitWhenStorageIsUnavailable(t *testing.T) {
	t.Setenv("AWS_MAX_ATTEMPTS", "2")
	ctx := context.Background()
	fake, srv := newFakeS3(t)
	svc := service.New(openStore(t, "sqlite"), storage.NewProvider(storage.WithS3ReadTimeout(300*time.Millisecond)),
		service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := svc.CreateWarehouse(ctx, "wh", "s3://bucket/wh", map[string]string{"s3.endpoint": srv.URL,
		"s3.region": "us-east-1", "s3.access-key-id": "k", "s3.secret-access-key": "s3cr3t"})
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	_, err = svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t",
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)})
	require.NoError(t, err)
	id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
	prop := func() string {
		res, err := svc.Tables().LoadTable(ctx, "wh", id, "", service.NoDelegation)
		require.NoError(t, err)
		if _, v, ok := strings.Cut(string(res.Metadata), `"k":"`); ok {
			return strings.SplitN(v, `"`, 2)[0]
		}
		return ""
	}

	for _, mode := range []string{"slowdown", "blackhole"} {
		fake.mode.Store(mode)
		start := time.Now()
		_, err = svc.CommitTable(ctx, "wh", setProp(mode))
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "%s: %v", mode, err)
		require.Less(t, time.Since(start), 20*time.Second, "%s: the commit waited too long", mode)
		msg := err.(*fault.Error).Message
		require.Contains(t, msg, "nothing was committed", mode)
		for _, leak := range []string{srv.URL, strings.TrimPrefix(srv.URL, "http://"), "SlowDown", "s3cr3t", "StatusCode", "operation error", "timeout"} {
			require.NotContains(t, msg, leak, mode)
		}
		require.Equal(t, "", prop(), "%s: nothing landed", mode)
	}
	fake.mode.Store("")
	_, err = svc.CommitTable(ctx, "wh", setProp("after"))
	require.NoError(t, err, "the table commits again once S3 is back")
	require.Equal(t, "after", prop())
}
