package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

func auditBackends(t *testing.T, run func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "catalog.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		run(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := sqlstore.OpenPostgres(context.Background(), pgtest.NewDatabase(t), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		run(t, st)
	})
}

// auditFixture appends 25 events, one per millisecond from base: even ones
// by alice on table resources, odd ones by bob on a warehouse, every fifth
// a vend.
func auditFixture(t *testing.T, st store.Store, base time.Time) {
	t.Helper()
	var evs []store.AuditEvent
	for i := 0; i < 25; i++ {
		e := store.AuditEvent{At: base.Add(time.Duration(i) * time.Millisecond), RequestID: fmt.Sprint("r", i),
			Principal: "oidc:alice", Action: "POST /v1/{prefix}/namespaces", Resource: fmt.Sprintf("table:wh/ns/t%02d", i),
			Decision: "allowed", Status: 200}
		if i%2 == 1 {
			e.Principal, e.Resource, e.Decision, e.Status = "builtin:bob", "warehouse:wh2", "denied", 403
		}
		if i%5 == 0 {
			e.Action, e.Detail = "vend-credentials", "access=read"
		}
		evs = append(evs, e)
	}
	// Two batches: the second insert must not collide with the first.
	if err := st.AppendAudit(context.Background(), evs[:10]); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendAudit(context.Background(), evs[10:]); err != nil {
		t.Fatal(err)
	}
}

func TestAuditAppendAndList(t *testing.T) {
	auditBackends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		base := time.UnixMilli(1_700_000_000_000)
		auditFixture(t, st, base)

		all, next, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{})
		if err != nil || next != "" || len(all) != 25 {
			t.Fatalf("all: %d events, next %q, err %v", len(all), next, err)
		}
		first := all[0]
		if first.RequestID != "r24" || !first.At.Equal(base.Add(24*time.Millisecond)) || first.Status != 200 ||
			first.Principal != "oidc:alice" || first.Resource != "table:wh/ns/t24" || first.Decision != "allowed" || first.ID == "" {
			t.Fatalf("newest event round-tripped wrong: %+v", first)
		}
		cases := []struct {
			name string
			f    store.AuditFilter
			want int
		}{
			{"principal", store.AuditFilter{Principal: "builtin:bob"}, 12},
			{"action", store.AuditFilter{Action: "vend-credentials"}, 5},
			{"resource prefix", store.AuditFilter{ResourcePrefix: "table:wh/"}, 13},
			{"resource prefix is not a pattern", store.AuditFilter{ResourcePrefix: "table:wh/ns/t_"}, 0},
			{"resource prefix is case-sensitive", store.AuditFilter{ResourcePrefix: "TABLE:"}, 0},
			{"since inclusive", store.AuditFilter{Since: base.Add(20 * time.Millisecond)}, 5},
			{"until exclusive", store.AuditFilter{Until: base.Add(3 * time.Millisecond)}, 3},
			{"combined", store.AuditFilter{Principal: "oidc:alice", Action: "vend-credentials", Since: base.Add(time.Millisecond)}, 2},
		}
		for _, c := range cases {
			got, _, err := st.ListAudit(ctx, c.f, store.Page{})
			if err != nil || len(got) != c.want {
				t.Errorf("%s: %d events (want %d), err %v", c.name, len(got), c.want, err)
			}
		}
	})
}

func TestAuditPaging(t *testing.T) {
	auditBackends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		base := time.UnixMilli(1_700_000_000_000)
		auditFixture(t, st, base)
		// Same-millisecond rows must page by id without loss or repeat.
		same := []store.AuditEvent{{At: base, Principal: "p:x", Action: "a", Decision: "failed", Status: 500},
			{At: base, Principal: "p:x", Action: "a", Decision: "failed", Status: 500}}
		if err := st.AppendAudit(ctx, same); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		tok, pages := "", 0
		var prev *store.AuditEvent
		for {
			got, next, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{Token: tok, Size: 4})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for i := range got {
				e := got[i]
				if seen[e.ID] {
					t.Fatalf("event %s listed twice", e.ID)
				}
				seen[e.ID] = true
				if prev != nil && (e.At.After(prev.At) || (e.At.Equal(prev.At) && e.ID > prev.ID)) {
					t.Fatalf("not newest first: %v/%s after %v/%s", e.At, e.ID, prev.At, prev.ID)
				}
				prev = &e
			}
			if next == "" {
				break
			}
			tok = next
		}
		if len(seen) != 27 || pages != 7 {
			t.Fatalf("paged %d events in %d pages, want 27 in 7", len(seen), pages)
		}
		for _, bad := range []string{"!!", "bm90LWEtdG9rZW4"} { // not base64; "not-a-token"
			if _, _, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{Token: bad, Size: 2}); !errors.Is(err, store.ErrInvalidPageToken) {
				t.Errorf("token %q: %v, want ErrInvalidPageToken", bad, err)
			}
		}
	})
}

// TestAuditAppendIsIdempotent: appending a batch again (a retry whose
// first insert landed but whose answer was lost) succeeds and adds
// nothing; a batch mixing stored and new ids adds only the new ones.
func TestAuditAppendIsIdempotent(t *testing.T) {
	auditBackends(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		base := time.UnixMilli(1_700_000_000_000)
		evs := []store.AuditEvent{
			{ID: "a1", At: base, Principal: "p", Action: "x", Decision: "allowed", Status: 200},
			{ID: "a2", At: base, Principal: "p", Action: "x", Decision: "allowed", Status: 200},
		}
		if err := st.AppendAudit(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendAudit(ctx, evs); err != nil {
			t.Fatalf("a repeated batch failed: %v", err)
		}
		more := append(evs, store.AuditEvent{ID: "a3", At: base, Principal: "p", Action: "x", Decision: "allowed", Status: 200})
		if err := st.AppendAudit(ctx, more); err != nil {
			t.Fatal(err)
		}
		got, _, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("want 3 rows, got %d", len(got))
		}
	})
}
