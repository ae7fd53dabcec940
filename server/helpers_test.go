package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// backends are the stores every server test runs on.
var backends = []string{"sqlite", "postgres"}

type bundle struct {
	url       string
	warehouse string // file:// location
	store     store.Store
	client    *http.Client
	svc       *service.Service
	workers   store.Workers // started by drainJobs
}

func openStore(t testing.TB, backend string) store.Store {
	t.Helper()
	ctx := context.Background()
	var st *sqlstore.Store
	var err error
	switch backend {
	case "sqlite":
		st, err = sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "catalog.db"))
	case "postgres":
		st, err = sqlstore.OpenPostgres(ctx, pgtest.NewDatabase(t), true)
	}
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// setup starts a catalog over a fresh store with warehouse "wh".
func setup(t *testing.T, backend string) *bundle { return setupTB(t, backend, nil) }

// setupTB starts a server over a fresh store of backend with one file://
// warehouse "wh" having the given properties.
func setupTB(t testing.TB, backend string, whProps map[string]string) *bundle {
	t.Helper()
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{VerifyMetadataOnLoad: true, Logger: quiet})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	_, err := svc.CreateWarehouse(context.Background(), "wh", loc, whProps)
	require.NoError(t, err)
	srv := server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client(), svc: svc}
}

// unfinishedJobs are the states of a job that has yet to run or finish.
var unfinishedJobs = []string{"available", "scheduled", "pending", "running", "retryable"}

// startJobs starts job workers on the bundle's store, once.
func (b *bundle) startJobs(t *testing.T) {
	t.Helper()
	if b.workers != nil {
		return
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := b.store.StartWorkers(context.Background(), store.WorkerConfig{Workers: 2, Handlers: b.svc.JobHandlers(),
		PollInterval: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	b.workers = w
	// t may be a subtest that ends before the bundle does.
	t.Cleanup(func() { _ = w.Stop(context.Background()); b.workers = nil })
}

// drainJobs starts job workers (startJobs) and waits until no job is left
// to run, then requires that none was discarded.
func (b *bundle) drainJobs(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	b.startJobs(t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		jobs, _, err := b.store.ListJobs(ctx, store.JobFilter{States: unfinishedJobs}, store.Page{Size: 10})
		if err == nil && len(jobs) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "jobs still waiting or running after 60 s: %s (%v)", jobsText(jobs), err)
		time.Sleep(20 * time.Millisecond)
	}
	failed, _, err := b.store.ListJobs(ctx, store.JobFilter{States: []string{"discarded", "cancelled"}}, store.Page{Size: 10})
	require.NoError(t, err)
	require.Empty(t, failed, "jobs that failed for good")
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// errorOf asserts an Iceberg error body and returns (type, message).
func (r response) errorOf(t *testing.T) (string, string) {
	t.Helper()
	var e struct {
		Error struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
			Code    *int    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e), "error body must be JSON: %s", r.body)
	require.NotNil(t, e.Error.Message, "message required: %s", r.body)
	require.NotNil(t, e.Error.Type, "type required: %s", r.body)
	require.NotNil(t, e.Error.Code, "code required: %s", r.body)
	require.Equal(t, r.status, *e.Error.Code, "code must equal the HTTP status")
	return *e.Error.Type, *e.Error.Message
}

func (b *bundle) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	return b.doTB(t, method, path, body, headers...)
}

func (b *bundle) doTB(t testing.TB, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(v)
	default:
		data, err := json.Marshal(v)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	// The tests are a client of v4 tables; a test of what other clients
	// get passes service.ColumnFilesHeader with "" (not a v4 reader).
	req.Header.Set(service.ColumnFilesHeader, "true")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

const testSchema = `{"type":"struct","schema-id":0,"fields":[
 {"id":3,"name":"id","type":"long","required":true},
 {"id":4,"name":"data","type":"string","required":false}]}`

func (b *bundle) createNamespace(t *testing.T, levels ...string) { b.createNamespaceTB(t, levels...) }

func (b *bundle) createNamespaceTB(t testing.TB, levels ...string) {
	t.Helper()
	r := b.doTB(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": levels})
	require.Equal(t, 200, r.status, "%s", r.body)
}

func (b *bundle) createTable(t *testing.T, ns, name string, extra map[string]any) response {
	t.Helper()
	body := map[string]any{"name": name, "schema": json.RawMessage(testSchema)}
	for k, v := range extra {
		body[k] = v
	}
	return b.do(t, "POST", "/v1/wh/namespaces/"+ns+"/tables", body)
}

type jsonRaw string

func (j jsonRaw) MarshalJSON() ([]byte, error) { return []byte(j), nil }

func jobsText(jobs []*store.JobInfo) string {
	b, _ := json.Marshal(jobs)
	return string(b)
}
