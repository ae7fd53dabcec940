package service_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// countingRBACStore counts the access decisions asked of the database.
type countingRBACStore struct {
	store.RBACStore
	n atomic.Int64
}

func (c *countingRBACStore) CheckAccess(ctx context.Context, q store.AccessQuery) (store.Access, error) {
	c.n.Add(1)
	return c.RBACStore.CheckAccess(ctx, q)
}

func privs(s string) []service.Privilege {
	out := []service.Privilege{}
	for _, p := range strings.Fields(s) {
		out = append(out, service.Privilege(p))
	}
	return out
}

// TestEffectivePrivileges checks what the caller is told it holds, with
// inheritance, and that each answer agrees with Authorize privilege by
// privilege and costs one database decision.
func TestEffectivePrivileges(t *testing.T) {
	cases := []struct {
		grants []string
		on     string
		want   string
	}{
		{nil, "table:wh/a.b.c/t", ""},
		{[]string{"table-read-metadata@namespace:wh/a", "table-list@namespace:wh/a"}, "table:wh/a.b.c/t", "table-list table-read-metadata"},
		{[]string{"table-drop@table:wh/a.b.c/u"}, "table:wh/a.b.c/t", ""},
		{[]string{"table-drop@warehouse:wh"}, "table:wh/a.b.c/t", "table-drop"},
		{[]string{"table-drop@warehouse:wh2"}, "table:wh/a.b.c/t", ""},
		{[]string{"table-create@namespace:wh/a.b", "namespace-list@warehouse:wh"}, "namespace:wh/a.b.c", "namespace-list table-create"},
		// table-create is not about a table, so it is not listed on one
		{[]string{"table-create@namespace:wh/a.b"}, "table:wh/a.b.c/t", ""},
		{[]string{"manage-warehouses@server:"}, "warehouse:wh", "manage-warehouses"},
		{[]string{"manage-grants@server:"}, "server:", "manage-grants"},
		{[]string{"manage-grants@server:"}, "warehouse:wh", ""},
		{[]string{"view-drop@namespace:wh/a"}, "view:wh/a.x/v", "view-drop"},
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			counter := &countingRBACStore{RBACStore: fx.st}
			svc := service.New(fx.st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(counter)})
			for _, c := range cases {
				ctx := fx.principal(t, c.grants...)
				r := parseRes(c.on)
				before := counter.n.Load()
				got, err := svc.EffectivePrivileges(ctx, r)
				require.NoError(t, err)
				require.Equal(t, int64(1), counter.n.Load()-before, "one decision per resource")
				require.Equal(t, privs(c.want), got, "%v on %s", c.grants, c.on)
				for _, p := range access.PrivilegesOn(r.Kind) {
					err := fx.rbac.Authorize(ctx, identity.From(ctx), p, r)
					require.Equal(t, err == nil, slices.Contains(got, p), "%s: Authorize says %v", p, err)
				}
			}
			anon, err := svc.EffectivePrivileges(context.Background(), parseRes("table:wh/a.b.c/t"))
			require.NoError(t, err)
			require.Empty(t, anon)
			all, err := svc.EffectivePrivileges(local, parseRes("server:"))
			require.NoError(t, err)
			require.Equal(t, access.AllPrivileges(), all)
		})
	}
}

// TestEffectivePrivilegesAllowAllAndBadResources: with authentication off
// every privilege about the kind is held; an ill-formed resource is a 400.
func TestEffectivePrivilegesAllowAllAndBadResources(t *testing.T) {
	svc := service.New(openStore(t, "sqlite"), storage.NewProvider(), service.Options{})
	got, err := svc.EffectivePrivileges(context.Background(), parseRes("table:wh/a/t"))
	require.NoError(t, err)
	require.Equal(t, privs("table-drop table-list table-read-data table-read-metadata table-write-data table-write-metadata"), got)
	got, err = svc.EffectivePrivileges(context.Background(), parseRes("namespace:wh/a"))
	require.NoError(t, err)
	require.Len(t, got, len(access.AllPrivileges())-4, "everything but manage-warehouses, manage-grants, deleted-list and deleted-undrop")
	for _, bad := range []string{"table:wh/a", "namespace:wh", "warehouse:", "server:wh", "column:wh/a/t", "table:/a/t"} {
		_, err := svc.EffectivePrivileges(context.Background(), parseRes(bad))
		require.Equal(t, fault.BadRequest, fault.KindOf(err), bad)
	}
}
