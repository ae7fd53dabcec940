package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// logLines returns the JSON log lines of b with msg.
func logLines(t *testing.T, b *syncBuffer, msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// operatorBundle is a server over SQLite whose logs and metrics the test
// reads.
type operatorBundle struct {
	*bundle
	logs *syncBuffer
	reg  *prometheus.Registry
}

func setupOperator(t *testing.T, auth server.Authenticator) *operatorBundle {
	t.Helper()
	st := openStore(t, "sqlite")
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	reg := prometheus.NewRegistry()
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: log, OnCommit: server.CommitObserver(reg)})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	_, err := svc.CreateWarehouse(context.Background(), "wh", loc, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log, Registry: reg, Auth: auth}))
	t.Cleanup(hs.Close)
	client := hs.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &operatorBundle{bundle: &bundle{url: hs.URL, warehouse: loc, store: st, client: client}, logs: logs, reg: reg}
}

// refuseAll is authentication that accepts no token.
type refuseAll struct{}

func (refuseAll) Authenticate(context.Context, string) (identity.Principal, error) {
	return identity.Principal{}, errors.New("no")
}

// TestRootAndFavicon: / sends a browser to the console, /favicon.ico is
// answered 204 instead of an error, with authentication off and on.
func TestRootAndFavicon(t *testing.T) {
	for _, tc := range []struct {
		name string
		auth server.Authenticator
	}{{"auth off", nil}, {"auth on", refuseAll{}}} {
		t.Run(tc.name, func(t *testing.T) {
			b := setupOperator(t, tc.auth)
			for _, method := range []string{"GET", "HEAD"} {
				r := b.do(t, method, "/", nil)
				require.Equal(t, http.StatusFound, r.status, "%s /: %s", method, r.body)
				require.Equal(t, "/ui/", r.header.Get("Location"))
				r = b.do(t, method, "/favicon.ico", nil)
				require.Equal(t, http.StatusNoContent, r.status, "%s /favicon.ico: %s", method, r.body)
				require.Empty(t, r.body)
			}
			r := b.do(t, "GET", "/ui/", nil)
			require.Equal(t, http.StatusOK, r.status, "the redirect's target is served")
			if tc.auth == nil {
				r = b.do(t, "POST", "/", "{}")
				require.Equal(t, http.StatusMethodNotAllowed, r.status)
			}
		})
	}
}

// TestBadTypeNamesTheField: a create with a type iceberg does not know is
// a 400 BadRequestException naming the field's path and the type.
func TestBadTypeNamesTheField(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":{"type":"struct","fields":[
			{"id":2,"name":"b","required":false,"type":"strin"}]}}]}`, `Invalid schema: field "a.b": unknown type "strin"`},
		{`{"type":"struct","fields":[{"id":1,"name":"x","required":false,"type":"lnog"}]}`, `Invalid schema: field "x": unknown type "lnog"`},
	} {
		r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": json.RawMessage(tc.schema)})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		typ, msg := r.errorOf(t)
		require.Equal(t, "BadRequestException", typ)
		require.Equal(t, tc.want, msg)
	}
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/views", map[string]any{"name": "v",
		"schema":       json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"strin"}]}`),
		"view-version": map[string]any{"version-id": 1, "timestamp-ms": 1, "schema-id": 0, "summary": map[string]string{}, "representations": []any{}, "default-namespace": []string{"ns"}}})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	_, msg := r.errorOf(t)
	require.Equal(t, `Invalid schema: field "a": unknown type "strin"`, msg)
}

// TestRequestLogLines: every request line carries the request id the
// client was sent; a 4xx or 5xx line carries its ErrorModel type and, when
// it has one, the reason.
func TestRequestLogLines(t *testing.T) {
	b := setupOperator(t, nil)
	b.createNamespace(t, "ns")
	require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
	ns := map[string]any{"namespace": []string{"ns"}}
	require.Equal(t, 409, b.do(t, "POST", "/v1/wh/namespaces", ns, "Idempotency-Key", "k-dup").status)
	for _, tc := range []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		wantType           string // when the body is not an ErrorModel
	}{
		{"ok", "GET", "/v1/wh/namespaces/ns/tables/t", nil, nil, 200, ""},
		{"no such table", "GET", "/v1/wh/namespaces/ns/tables/nope", nil, nil, 404, ""},
		{"no such namespace", "GET", "/v1/wh/namespaces/nope/tables", nil, nil, 404, ""},
		{"bad schema", "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "u",
			"schema": json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"strin"}]}`)}, nil, 400, ""},
		{"with a reason", "POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"add-data-files": []any{}}, nil, 400, ""},
		{"method not allowed", "PUT", "/v1/wh/namespaces/ns/tables/t", "{}", nil, 405, ""},
		{"unsupported media", "POST", "/v1/wh/namespaces", "{}", []string{"Content-Type", "text/plain"}, 415, ""},
		{"no route", "GET", "/nowhere", nil, nil, 400, ""},
		{"client's request id", "GET", "/v1/wh/namespaces/ns/tables/nope", nil, []string{"X-Request-ID", "trace-42"}, 404, ""},
		{"replayed", "POST", "/v1/wh/namespaces", ns, []string{"Idempotency-Key", "k-dup"}, 409, ""},
		{"oauth error", "POST", "/v1/oauth/tokens", "grant_type=client_credentials",
			[]string{"Content-Type", "application/x-www-form-urlencoded"}, 400, "invalid_request"},
	} {
		r := b.do(t, tc.method, tc.path, tc.body, tc.headers...)
		require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
		id := r.header.Get("X-Request-ID")
		require.NotEmpty(t, id, tc.name)
		var line map[string]any
		for _, l := range logLines(t, b.logs, "request") {
			if l["request_id"] == id {
				line = l
			}
		}
		require.NotNil(t, line, "%s: no request line with request_id %s", tc.name, id)
		require.EqualValues(t, tc.status, line["status"], tc.name)
		if tc.status < 400 {
			require.NotContains(t, line, "error_type", tc.name)
			continue
		}
		if tc.name == "replayed" {
			require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		}
		if tc.wantType != "" {
			require.Equal(t, tc.wantType, line["error_type"], tc.name)
			continue
		}
		var body struct {
			Error struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(r.body, &body), tc.name)
		require.NotEmpty(t, body.Error.Type, tc.name)
		require.Equal(t, body.Error.Type, line["error_type"], tc.name)
		if body.Error.Reason != "" {
			require.Equal(t, body.Error.Reason, line["error_reason"], tc.name)
		} else {
			require.NotContains(t, line, "error_reason", tc.name)
		}
		if tc.name == "with a reason" {
			require.Equal(t, "empty-commit", line["error_reason"], "the case meant to carry a reason does")
		}
	}
	id := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/nope", nil, "X-Request-ID", "trace-42").header.Get("X-Request-ID")
	require.Equal(t, "trace-42", id, "the client's request id is kept")
}

// TestCommitOutcomeRejected: catalog_commit_outcomes_total tells a commit
// refused for the client's mistake (400: "rejected") from a failed
// requirement (409) and from a failure of ours ("error", none here).
func TestCommitOutcomeRejected(t *testing.T) {
	b := setupOperator(t, nil)
	b.createNamespace(t, "ns")
	require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
	commit := func(body string) int {
		return b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", body).status
	}
	require.Equal(t, 200, commit(`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`))
	require.Equal(t, 400, commit(`{"requirements":[],"updates":[{"action":"set-current-schema","schema-id":42}]}`))
	require.Equal(t, 409, commit(`{"requirements":[{"type":"assert-current-schema-id","current-schema-id":7}],"updates":[{"action":"set-properties","updates":{"k":"w"}}]}`))
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"add-data-files": []any{map[string]any{
		"location": "data/x.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": 1}}})
	require.Equal(t, 400, r.status, "%s", r.body)

	got := commitOutcomes(t, b.reg)
	require.Equal(t, map[string]float64{"committed": 1, "rejected": 2, "requirement_failed": 1}, got)
}

// commitOutcomes reads catalog_commit_outcomes_total by outcome.
func commitOutcomes(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "catalog_commit_outcomes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}
