package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// memAudit is an AuditStore in memory that records the size of every
// append; it can be slowed down or made to fail.
type memAudit struct {
	mu      sync.Mutex
	events  []store.AuditEvent
	batches []int
	delay   time.Duration
	fail    error
	// failTimes fails that many appends with fail, then lets them through;
	// with landFirst the failed appends are stored anyway (an answer lost
	// after the insert landed).
	failTimes, calls int
	landFirst        bool
	// poison is a Detail value refused for good (ErrInvalidValue).
	poison string
	ids    map[string]bool
}

func (m *memAudit) AppendAudit(_ context.Context, evs []store.AuditEvent) error {
	time.Sleep(m.delay)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.poison != "" {
		for _, e := range evs {
			if e.Detail == m.poison {
				return fmt.Errorf("%w: append audit events", store.ErrInvalidValue)
			}
		}
	}
	failing := m.fail != nil && (m.failTimes == 0 || m.calls <= m.failTimes)
	if failing && !m.landFirst {
		return m.fail
	}
	if m.ids == nil {
		m.ids = map[string]bool{}
	}
	n := 0
	for _, e := range evs {
		if e.ID == "" || !m.ids[e.ID] { // the store skips ids it holds
			m.ids[e.ID] = true
			m.events = append(m.events, e)
			n++
		}
	}
	m.batches = append(m.batches, n)
	if failing {
		return m.fail
	}
	return nil
}

func (m *memAudit) ListAudit(context.Context, store.AuditFilter, store.Page) ([]store.AuditEvent, string, error) {
	return nil, "", errors.New("not used")
}

func (m *memAudit) snapshot() ([]store.AuditEvent, []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]store.AuditEvent(nil), m.events...), append([]int(nil), m.batches...)
}

// TestAuditLogNeverDrops: many concurrent recorders against a one-slot
// queue and a slow store; every event lands exactly once, no INSERT holds
// more than Batch rows, and Close returns only after the last write.
func TestAuditLogNeverDrops(t *testing.T) {
	m := &memAudit{delay: time.Millisecond}
	a := access.NewAuditLog(m, service.AuditLogOptions{Queue: 1, Batch: 7})
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				a.Record(store.AuditEvent{RequestID: fmt.Sprintf("%d-%d", w, i), Action: "a"})
			}
		}(w)
	}
	wg.Wait()
	a.Close()
	a.Close() // idempotent
	evs, batches := m.snapshot()
	require.Len(t, evs, writers*each)
	seen := map[string]bool{}
	for _, e := range evs {
		require.False(t, seen[e.RequestID], "event %s written twice", e.RequestID)
		seen[e.RequestID] = true
	}
	for _, n := range batches {
		require.LessOrEqual(t, n, 7)
	}
	// After Close, Record writes synchronously rather than dropping.
	a.Record(store.AuditEvent{RequestID: "late"})
	evs, _ = m.snapshot()
	require.Equal(t, "late", evs[len(evs)-1].RequestID)
}

// TestAuditLogBatches: events queued while the writer is busy go out
// together, in INSERTs of up to Batch rows.
func TestAuditLogBatches(t *testing.T) {
	m := &memAudit{delay: 20 * time.Millisecond}
	a := access.NewAuditLog(m, service.AuditLogOptions{Batch: 100})
	for i := 0; i < 250; i++ {
		a.Record(store.AuditEvent{RequestID: fmt.Sprint(i)})
	}
	a.Flush(context.Background())
	evs, batches := m.snapshot()
	require.Len(t, evs, 250, "Flush returned before everything was written")
	require.Less(t, len(batches), 250/2, "events were not batched: %v", batches)
	for _, n := range batches {
		require.LessOrEqual(t, n, 100)
	}
	a.Close()
}

// TestAuditLogWriteFailure: a batch the database never takes is retried
// until Close's ShutdownWait, then counted and logged with its size and
// the store's error, never the rows.
func TestAuditLogWriteFailure(t *testing.T) {
	m := &memAudit{fail: fmt.Errorf("%w: append audit events (08006)", store.ErrUnavailable)}
	var logs bytes.Buffer
	var mu sync.Mutex
	lost := 0
	a := access.NewAuditLog(m, service.AuditLogOptions{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)), RetryMax: 10 * time.Millisecond, ShutdownWait: 300 * time.Millisecond,
		OnWriteFailure: func(n int) { mu.Lock(); lost += n; mu.Unlock() },
	})
	a.Record(store.AuditEvent{Principal: "oidc:secret-subject", Resource: "table:wh/ns/secret-table", Detail: "access=read"})
	a.Close()
	mu.Lock()
	require.Equal(t, 1, lost)
	mu.Unlock()
	out := logs.String()
	require.Contains(t, out, "audit write failed")
	require.Contains(t, out, "08006")
	require.NotContains(t, out, "secret-subject")
	require.NotContains(t, out, "secret-table")
}

// TestAuditLogRetriesUntilWritten: while the database is away (a run of
// ErrUnavailable, or answers lost after the insert landed) every batch is
// retried with the same ids until it is written: every event lands exactly
// once, nothing is counted lost, and every retry is counted.
func TestAuditLogRetriesUntilWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *memAudit
	}{
		{"unavailable", &memAudit{fail: fmt.Errorf("%w: append audit events (network)", store.ErrUnavailable), failTimes: 8}},
		{"answer lost after landing", &memAudit{fail: fmt.Errorf("%w: append audit events", store.ErrOutcomeUnknown),
			failTimes: 3, landFirst: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			lost, retried := 0, 0
			a := access.NewAuditLog(tc.m, service.AuditLogOptions{Batch: 10, RetryMax: 20 * time.Millisecond,
				OnWriteFailure: func(n int) { mu.Lock(); lost += n; mu.Unlock() },
				OnWriteRetry:   func(n int) { mu.Lock(); retried += n; mu.Unlock() }})
			for i := 0; i < 25; i++ {
				a.Record(store.AuditEvent{RequestID: fmt.Sprint(i), Action: "a"})
			}
			a.Close()
			evs, _ := tc.m.snapshot()
			require.Len(t, evs, 25, "every event written exactly once")
			seen := map[string]bool{}
			for _, e := range evs {
				require.False(t, seen[e.RequestID], "event %s written twice", e.RequestID)
				seen[e.RequestID] = true
			}
			mu.Lock()
			defer mu.Unlock()
			require.Zero(t, lost)
			require.Positive(t, retried)
		})
	}
}

// TestAuditLogIsolatesARefusedRow: a row the database refuses for good
// costs only itself; the rest of its batch is written.
func TestAuditLogIsolatesARefusedRow(t *testing.T) {
	m := &memAudit{poison: "bad"}
	lost := 0
	a := access.NewAuditLog(m, service.AuditLogOptions{Batch: 50, OnWriteFailure: func(n int) { lost += n }})
	for i := 0; i < 10; i++ {
		e := store.AuditEvent{RequestID: fmt.Sprint(i)}
		if i == 4 {
			e.Detail = "bad"
		}
		a.Record(e)
	}
	a.Close()
	evs, _ := m.snapshot()
	require.Len(t, evs, 9)
	require.Equal(t, 1, lost)
}

// TestRecordAuditLogsAndPersists: one log line with the documented fields
// and one row, principal and request id taken from the context.
func TestRecordAuditLogsAndPersists(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st := openStore(t, backend)
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: log})
			svc := service.New(st, storage.NewProvider(), service.Options{Logger: log, Audit: audit})
			ctx := access.WithRequestID(identity.With(context.Background(),
				identity.Principal{Source: identity.SourceOIDC, Subject: "alice"}), "req-1")
			svc.RecordAudit(ctx, service.AuditEvent{Action: "DELETE /v1/{prefix}/namespaces/{namespace}",
				Resource: "namespace:wh/a\x00b", Status: 403})
			audit.Close()

			evs, _, err := svc.ListAudit(context.Background(), service.AuditFilter{}, service.Page{})
			require.NoError(t, err)
			require.Len(t, evs, 1)
			e := evs[0]
			require.Equal(t, "oidc:alice", e.Principal)
			require.Equal(t, "req-1", e.RequestID)
			require.Equal(t, "denied", e.Decision)
			require.Equal(t, 403, e.Status)
			require.Equal(t, "namespace:wh/a\uFFFDb", e.Resource, "NUL must be replaced before it reaches the database")
			require.WithinDuration(t, time.Now(), e.At, time.Minute)
			line := logs.String()
			for _, want := range []string{`"msg":"audit"`, `"principal":"oidc:alice"`, `"action":"DELETE /v1/{prefix}/namespaces/{namespace}"`,
				`"decision":"denied"`, `"status":403`, `"request_id":"req-1"`, `"resource":"namespace:wh/a`} {
				require.Contains(t, line, want)
			}
		})
	}
}

// denyAll refuses every privilege.
type denyAll struct{}

func (denyAll) Authorize(context.Context, identity.Principal, service.Privilege, service.Resource) error {
	return &fault.Error{Kind: fault.Forbidden, Message: "Forbidden"}
}

func (denyAll) TableAccess(context.Context, identity.Principal, service.Resource) (credentials.AccessLevel, error) {
	return "", &fault.Error{Kind: fault.Forbidden, Message: "Forbidden"}
}

func (denyAll) Held(context.Context, identity.Principal, service.Resource, []service.Privilege) ([]service.Privilege, error) {
	return nil, nil
}

func TestListAuditRequiresManageGrants(t *testing.T) {
	st := openStore(t, "sqlite")
	svc := service.New(st, storage.NewProvider(), service.Options{Authorizer: denyAll{}})
	_, _, err := svc.ListAudit(context.Background(), service.AuditFilter{}, service.Page{})
	require.Equal(t, fault.Forbidden, fault.KindOf(err))
}

func TestListAuditBounds(t *testing.T) {
	st := openStore(t, "sqlite")
	svc := service.New(st, storage.NewProvider(), service.Options{})
	_, _, err := svc.ListAudit(context.Background(), service.AuditFilter{}, service.Page{Size: service.MaxAuditPageSize + 1})
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	now := time.Now()
	_, _, err = svc.ListAudit(context.Background(), service.AuditFilter{Since: now, Until: now.Add(-time.Second)}, service.Page{})
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	_, _, err = svc.ListAudit(context.Background(), service.AuditFilter{}, service.Page{Token: "%%%"})
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
}

// FuzzAuditText: whatever a field holds, the stored value is valid UTF-8
// without NUL and at most 1024 bytes (checked through a recorded event).
func FuzzAuditText(f *testing.F) {
	f.Add("plain")
	f.Add("a\x00b\xff" + strings.Repeat("é", 600))
	f.Fuzz(func(t *testing.T, s string) {
		m := &memAudit{}
		a := access.NewAuditLog(m, service.AuditLogOptions{})
		svc := service.New(nil, nil, service.Options{Audit: a, Logger: slog.New(slog.NewTextHandler(discard{}, nil))})
		svc.RecordAudit(context.Background(), service.AuditEvent{Action: s, Resource: s, Detail: s, Principal: s, RequestID: s})
		a.Close()
		evs, _ := m.snapshot()
		if len(evs) != 1 {
			t.Fatalf("%d events", len(evs))
		}
		e := evs[0]
		for _, v := range []string{e.Action, e.Resource, e.Detail, e.Principal, e.RequestID} {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) || len(v) > 1024 {
				t.Fatalf("unstorable field %q", v)
			}
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
