package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

func TestPrincipalsSQLite(t *testing.T) {
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	testPrincipals(t, st)
}

func TestPrincipalsPostgres(t *testing.T) {
	st, err := sqlstore.OpenPostgres(context.Background(), pgtest.NewDatabase(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	testPrincipals(t, st)
}

func testPrincipals(t *testing.T, st store.Store) {
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		p := &store.Principal{Name: fmt.Sprintf("p%d", i), ClientID: fmt.Sprintf("c%d", i), SecretHash: "h"}
		if err := st.PrincipalCreate(ctx, p); err != nil {
			t.Fatal(err)
		}
		if p.ID == "" || p.SecretGeneration != 1 || p.CreatedAt.IsZero() {
			t.Fatalf("created %+v", p)
		}
	}
	var ae *store.AlreadyExistsError
	if err := st.PrincipalCreate(ctx, &store.Principal{Name: "p1", ClientID: "new", SecretHash: "h"}); !errors.As(err, &ae) {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := st.PrincipalCreate(ctx, &store.Principal{Name: "new", ClientID: "c1", SecretHash: "h"}); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("duplicate client id: %v", err)
	}
	got, err := st.PrincipalByClientID(ctx, "c3")
	if err != nil || got.Name != "p3" || got.SecretHash != "h" {
		t.Fatalf("by client id: %+v %v", got, err)
	}
	if _, err := st.PrincipalGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := st.PrincipalByClientID(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing client id: %v", err)
	}

	var names []string
	page := store.Page{Size: 2}
	for pages := 0; ; pages++ {
		ps, next, err := st.PrincipalList(ctx, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			names = append(names, p.Name)
		}
		if next == "" {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		page.Token = next
	}
	if fmt.Sprint(names) != "[p0 p1 p2 p3 p4]" {
		t.Fatalf("listed %v", names)
	}
	if _, _, err := st.PrincipalList(ctx, store.Page{Token: "!!", Size: 1}); !errors.Is(err, store.ErrInvalidPageToken) {
		t.Fatalf("bad token: %v", err)
	}

	before, _ := st.PrincipalGet(ctx, "p2")
	r, err := st.PrincipalRotate(ctx, "p2", "h2")
	if err != nil || r.SecretGeneration != 2 || r.SecretHash != "h2" || r.ID != before.ID || r.RotatedAt.Before(before.RotatedAt) {
		t.Fatalf("rotate: %+v %v", r, err)
	}
	if _, err := st.PrincipalRotate(ctx, "nope", "h"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotate missing: %v", err)
	}
	if err := st.PrincipalDelete(ctx, "p2"); err != nil {
		t.Fatal(err)
	}
	if err := st.PrincipalDelete(ctx, "p2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	again := &store.Principal{Name: "p2", ClientID: "c2b", SecretHash: "h"}
	if err := st.PrincipalCreate(ctx, again); err != nil || again.ID == before.ID {
		t.Fatalf("recreate: %v, id reused %v", err, again.ID == before.ID)
	}
}
