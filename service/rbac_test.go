package service_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// rbacFixture is a catalog under the RBAC authorizer with warehouses wh and
// wh2, namespaces a, a.b, a.b.c, a.x and tables a.b.c.t, a.b.c.u, a.x.t.
type rbacFixture struct {
	st     *sqlstore.Store
	svc    *service.Service
	rbac   *service.RBAC
	vendor *fixedVendor
	admin  context.Context
	n      int
}

var local = identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})

const testSchema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

func newRBACFixture(t *testing.T, backend string) *rbacFixture {
	st := openStore(t, backend)
	rbac, vendor := access.NewRBAC(st), &fixedVendor{}
	svc := service.New(st, storage.NewProvider(), service.Options{
		Authorizer: rbac, Credentials: vendor, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	for _, wh := range []string{"wh", "wh2"} {
		_, err := svc.CreateWarehouse(local, wh, "file://"+t.TempDir(), nil)
		require.NoError(t, err)
	}
	for _, ns := range []string{"a", "a.b", "a.b.c", "a.x"} {
		_, err := svc.CreateNamespace(local, "wh", strings.Split(ns, "."), nil)
		require.NoError(t, err)
	}
	for _, id := range []string{"a.b.c.t", "a.b.c.u", "a.x.t"} {
		levels := strings.Split(id, ".")
		_, err := svc.Tables().CreateTable(local, "wh", levels[:len(levels)-1], service.CreateTableInput{Name: levels[len(levels)-1], Schema: []byte(testSchema)})
		require.NoError(t, err)
	}
	return &rbacFixture{st: st, svc: svc, rbac: rbac, vendor: vendor, admin: local}
}

// principal returns the context of a new OIDC principal holding a role
// with the given grants ("privilege@kind:warehouse/ns.ns/name").
func (fx *rbacFixture) principal(t *testing.T, grants ...string) context.Context {
	fx.n++
	role := fmt.Sprintf("role%d", fx.n)
	sub := fmt.Sprintf("user%d", fx.n)
	_, err := fx.svc.Admin().CreateRole(fx.admin, role, "")
	require.NoError(t, err)
	for _, g := range grants {
		priv, on, _ := strings.Cut(g, "@")
		require.NoError(t, fx.svc.Admin().GrantPrivilege(fx.admin, role, service.Grant{Privilege: service.Privilege(priv), On: parseRes(on)}), g)
	}
	require.NoError(t, fx.svc.Admin().AssignRole(fx.admin, role, service.Assignee{Kind: service.AssigneeOIDC, Name: sub}))
	return identity.With(context.Background(), identity.Principal{Source: identity.SourceOIDC, Subject: sub})
}

// parseRes parses "kind:warehouse/ns.ns/name" (namespace and name optional).
func parseRes(s string) service.Resource {
	kind, rest, _ := strings.Cut(s, ":")
	r := service.Resource{Kind: service.ResourceKind(kind)}
	parts := strings.Split(rest, "/")
	if parts[0] != "" {
		r.Warehouse = parts[0]
	}
	if len(parts) > 1 {
		r.Namespace = strings.Split(parts[1], ".")
	}
	if len(parts) > 2 {
		r.Name = parts[2]
	}
	return r
}

func ident(s string) service.Ident {
	levels := strings.Split(s, ".")
	return service.Ident{Namespace: levels[:len(levels)-1], Name: levels[len(levels)-1]}
}

// TestRBACInheritance checks which grants let a principal load table
// a.b.c.t, and that every refusal is the 404 of a missing table when the
// principal holds nothing on it or around it, and 403 when it does.
func TestRBACInheritance(t *testing.T) {
	cases := []struct {
		grant string
		want  fault.Kind // fault.Internal stands for success
	}{
		{"table-read-metadata@server:", fault.Internal},
		{"table-read-metadata@warehouse:wh", fault.Internal},
		{"table-read-metadata@warehouse:wh2", fault.NoSuchTable},
		{"table-read-metadata@namespace:wh/a", fault.Internal},
		{"table-read-metadata@namespace:wh/a.b.c", fault.Internal},
		{"table-read-metadata@namespace:wh/a.x", fault.NoSuchTable},
		{"table-read-metadata@namespace:wh2/a", fault.NoSuchTable},
		{"table-read-metadata@namespace:wh/a.b.c.t", fault.NoSuchTable}, // a namespace named like the table contains nothing of it
		{"table-read-metadata@table:wh/a.b.c/t", fault.Internal},
		{"table-read-metadata@table:wh/a.b.c/u", fault.NoSuchTable},
		{"table-read-metadata@table:wh/a.x/t", fault.NoSuchTable},
		{"table-list@table:wh/a.b.c/t", fault.Forbidden},
		{"table-drop@namespace:wh/a.b", fault.Forbidden},
		{"namespace-list@namespace:wh/a", fault.Forbidden},
		{"namespace-list@warehouse:wh", fault.Forbidden},
		{"manage-grants@server:", fault.Forbidden},
		{"table-read-data@namespace:wh/a.b.c", fault.Forbidden},
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			for _, c := range cases {
				ctx := fx.principal(t, c.grant)
				_, err := fx.svc.Tables().LoadTable(ctx, "wh", ident("a.b.c.t"), "", service.NoDelegation)
				if c.want == fault.Internal {
					require.NoError(t, err, c.grant)
					continue
				}
				require.Error(t, err, c.grant)
				require.Equal(t, c.want, fault.KindOf(err), "%s: %v", c.grant, err)
			}
		})
	}
}

// TestRBACGroupsAndAnonymous checks group assignment and that callers
// without assignments see nothing.
func TestRBACGroupsAndAnonymous(t *testing.T) {
	fx := newRBACFixture(t, "sqlite")
	_, err := fx.svc.Admin().CreateRole(local, "readers", "")
	require.NoError(t, err)
	require.NoError(t, fx.svc.Admin().GrantPrivilege(local, "readers", service.Grant{Privilege: service.PrivTableReadMetadata, On: parseRes("namespace:wh/a")}))
	require.NoError(t, fx.svc.Admin().AssignRole(local, "readers", service.Assignee{Kind: service.AssigneeGroup, Name: "analysts"}))
	in := identity.With(context.Background(), identity.Principal{Source: identity.SourceOIDC, Subject: "x", Groups: []string{"other", "analysts"}})
	_, err = fx.svc.Tables().LoadTable(in, "wh", ident("a.b.c.t"), "", service.NoDelegation)
	require.NoError(t, err)
	// The same subject name as a builtin principal is someone else.
	out := identity.With(context.Background(), identity.Principal{Source: identity.SourceBuiltin, Subject: "analysts"})
	_, err = fx.svc.Tables().LoadTable(out, "wh", ident("a.b.c.t"), "", service.NoDelegation)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err))
	_, err = fx.svc.Tables().LoadTable(context.Background(), "wh", ident("a.b.c.t"), "", service.NoDelegation)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err), "anonymous sees nothing")
}

// TestRBACHiddenIsIndistinguishableFromMissing compares the error for a
// table the caller may not see with the error for a missing table.
func TestRBACHiddenIsIndistinguishableFromMissing(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			nobody := fx.principal(t)
			_, hidden := fx.svc.Tables().LoadTable(nobody, "wh", ident("a.b.c.t"), "", service.NoDelegation)
			_, missing := fx.svc.Tables().LoadTable(local, "wh", ident("a.b.c.zz"), "", service.NoDelegation)
			require.Equal(t, fault.NoSuchTable, fault.KindOf(hidden))
			require.Equal(t, strings.Replace(missing.Error(), "zz", "t", 1), hidden.Error())

			_, hidden = fx.svc.LoadNamespace(nobody, "wh", []string{"a", "b"})
			_, missing = fx.svc.LoadNamespace(local, "wh", []string{"a", "q"})
			require.Equal(t, strings.Replace(missing.Error(), "a.q", "a.b", 1), hidden.Error())
			require.Equal(t, fault.NoSuchNamespace, fault.KindOf(hidden))

			_, hidden = fx.svc.ConfigWarehouse(nobody, "wh")
			_, missing = fx.svc.ConfigWarehouse(local, "nope")
			require.Equal(t, fault.NoSuchWarehouse, fault.KindOf(hidden))
			require.Equal(t, strings.Replace(missing.Error(), "nope", "wh", 1), hidden.Error())

			// A privilege anywhere inside the warehouse is enough for its config.
			deep := fx.principal(t, "table-list@table:wh/a.x/t")
			_, err := fx.svc.ConfigWarehouse(deep, "wh")
			require.NoError(t, err)
			_, err = fx.svc.LoadNamespace(deep, "wh", []string{"a"})
			require.Equal(t, fault.Forbidden, fault.KindOf(err), "something below a is visible: 403")
			_, err = fx.svc.LoadNamespace(deep, "wh", []string{"a", "b"})
			require.Equal(t, fault.NoSuchNamespace, fault.KindOf(err))
		})
	}
}

// TestRBACRename checks that a rename needs table-drop on the source and
// table-create on the destination namespace.
func TestRBACRename(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			dropOnly := fx.principal(t, "table-drop@table:wh/a.b.c/t", "table-read-metadata@namespace:wh/a.x")
			err := fx.svc.Tables().Rename(dropOnly, "wh", store.KindTable, ident("a.b.c.t"), ident("a.x.moved"))
			require.Equal(t, fault.Forbidden, fault.KindOf(err), "%v", err)
			createOnly := fx.principal(t, "table-create@namespace:wh/a.x")
			err = fx.svc.Tables().Rename(createOnly, "wh", store.KindTable, ident("a.b.c.t"), ident("a.x.moved"))
			require.Equal(t, fault.NoSuchTable, fault.KindOf(err), "%v", err)
			_, err = fx.svc.Tables().LoadTable(local, "wh", ident("a.b.c.t"), "", service.NoDelegation)
			require.NoError(t, err, "nothing moved")

			both := fx.principal(t, "table-drop@table:wh/a.b.c/t", "table-create@namespace:wh/a.x")
			require.NoError(t, fx.svc.Tables().Rename(both, "wh", store.KindTable, ident("a.b.c.t"), ident("a.x.moved")))
			_, err = fx.svc.Tables().LoadTable(local, "wh", ident("a.x.moved"), "", service.NoDelegation)
			require.NoError(t, err)
		})
	}
}

// TestRBACTransactionDeniedCommitsNothing checks that a multi-table commit
// with one table the caller may not write changes no table.
func TestRBACTransactionDeniedCommitsNothing(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			ctx := fx.principal(t, "table-write-metadata@table:wh/a.b.c/t", "table-read-metadata@table:wh/a.b.c/u")
			change := func(id string) service.TableChange {
				return service.TableChange{Ident: ident(id), Updates: []byte(`[{"action":"set-properties","updates":{"k":"v"}}]`)}
			}
			err := fx.svc.TableCommits().CommitTransaction(ctx, "wh", []service.TableChange{change("a.b.c.t"), change("a.b.c.u")})
			require.Equal(t, fault.Forbidden, fault.KindOf(err), "%v", err)
			for _, id := range []string{"a.b.c.t", "a.b.c.u"} {
				res, err := fx.svc.Tables().LoadTable(local, "wh", ident(id), "", service.NoDelegation)
				require.NoError(t, err)
				require.NotContains(t, string(res.Metadata), `"k":"v"`, id)
			}
			require.NoError(t, fx.svc.TableCommits().CommitTransaction(ctx, "wh", []service.TableChange{change("a.b.c.t")}))
		})
	}
}

// fixedVendor vends one credential per call at the level it was asked for.
type fixedVendor struct{ last credentials.AccessLevel }

func (v *fixedVendor) Vend(_ context.Context, _ credentials.WarehouseInfo, loc string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	v.last = level
	return map[string]string{}, []credentials.StorageCredential{{Prefix: loc, Config: map[string]string{"s3.access-key-id": "AK"}}}, nil
}

// TestRBACTableAccess checks the access level credentials follow.
func TestRBACTableAccess(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			cases := []struct {
				grants []string
				level  credentials.AccessLevel
				kind   fault.Kind
			}{
				{[]string{"table-write-data@namespace:wh/a"}, credentials.AccessReadWrite, 0},
				{[]string{"table-read-data@table:wh/a.b.c/t"}, credentials.AccessRead, 0},
				{[]string{"table-read-data@warehouse:wh", "table-write-data@table:wh/a.b.c/t"}, credentials.AccessReadWrite, 0},
				{[]string{"table-read-metadata@table:wh/a.b.c/t"}, "", fault.Forbidden},
				{[]string{"table-write-data@table:wh/a.b.c/u"}, "", fault.NoSuchTable},
			}
			for _, c := range cases {
				ctx := fx.principal(t, c.grants...)
				creds, err := fx.svc.Storage().LoadCredentials(ctx, "wh", ident("a.b.c.t"))
				if c.level == "" {
					require.Equal(t, c.kind, fault.KindOf(err), "%v: %v", c.grants, err)
					continue
				}
				require.NoError(t, err, c.grants)
				require.Len(t, creds, 1)
				require.Equal(t, c.level, fx.vendor.last, "%v", c.grants)
				level, err := fx.rbac.TableAccess(ctx, identity.From(ctx), service.Resource{
					Kind: service.ResourceTable, Warehouse: "wh", Namespace: []string{"a", "b", "c"}, Name: "t"})
				require.NoError(t, err)
				require.Equal(t, c.level, level, "%v", c.grants)
			}
		})
	}
}

// TestRBACListFiltering checks that listings show what the caller may see.
func TestRBACListFiltering(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			tables := func(ctx context.Context, ns string) ([]string, error) {
				names, _, err := fx.svc.Tables().List(ctx, "wh", strings.Split(ns, "."), store.KindTable, store.Page{})
				return names, err
			}
			namespaces := func(ctx context.Context, parent ...string) []string {
				out, _, err := fx.svc.ListNamespaces(ctx, "wh", parent, service.Page{})
				require.NoError(t, err)
				var s []string
				for _, l := range out {
					s = append(s, strings.Join(l, "."))
				}
				return s
			}
			one := fx.principal(t, "table-read-metadata@table:wh/a.b.c/t")
			names, err := tables(one, "a.b.c")
			require.NoError(t, err)
			require.Equal(t, []string{"t"}, names)
			require.Equal(t, []string{"a"}, namespaces(one))
			require.Equal(t, []string{"a.b"}, namespaces(one, "a"))
			_, err = tables(one, "a.x")
			require.Equal(t, fault.NoSuchNamespace, fault.KindOf(err), "a.x is hidden: %v", err)

			lister := fx.principal(t, "table-list@namespace:wh/a.b.c")
			names, err = tables(lister, "a.b.c")
			require.NoError(t, err)
			require.Equal(t, []string{"t", "u"}, names)

			nsLister := fx.principal(t, "namespace-list@warehouse:wh")
			require.Equal(t, []string{"a.b", "a.x"}, namespaces(nsLister, "a"))
			names, err = tables(nsLister, "a.b.c")
			require.NoError(t, err, "a container privilege makes every table visible")
			require.Equal(t, []string{"t", "u"}, names)

			nobody := fx.principal(t)
			_, _, err = fx.svc.ListNamespaces(nobody, "wh", nil, service.Page{})
			require.Equal(t, fault.NoSuchWarehouse, fault.KindOf(err))
		})
	}
}

// TestEnsureBootstrapAdmin checks that the bootstrap role holds every
// privilege on the server and that running it again changes nothing.
func TestEnsureBootstrapAdmin(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newRBACFixture(t, backend)
			admin := identity.With(context.Background(), identity.Principal{Source: identity.SourceBuiltin, Subject: "admin"})
			_, err := fx.svc.Admin().ListRoles(admin)
			require.Equal(t, fault.Forbidden, fault.KindOf(err), "not yet an admin")
			a, err := access.ParseAssignee("builtin:admin")
			require.NoError(t, err)
			require.NoError(t, fx.svc.Admin().EnsureBootstrapAdmin(context.Background(), a))
			require.NoError(t, fx.svc.Admin().EnsureBootstrapAdmin(context.Background(), a), "idempotent")
			roles, err := fx.svc.Admin().ListRoles(admin)
			require.NoError(t, err)
			require.Len(t, roles, 1)
			grants, err := fx.svc.Admin().ListGrants(admin, service.BootstrapRole)
			require.NoError(t, err)
			require.Len(t, grants, len(access.AllPrivileges()))
			_, err = fx.svc.Tables().LoadTable(admin, "wh", ident("a.b.c.t"), "", service.NoDelegation)
			require.NoError(t, err)
			require.NoError(t, fx.svc.Tables().DropTable(admin, "wh", ident("a.b.c.t"), true))
			_, err = access.ParseAssignee("user:x")
			require.Equal(t, fault.BadRequest, fault.KindOf(err))
		})
	}
}

// BenchmarkLoadTableAuth compares loadTable under AllowAll with loadTable
// under RBAC (a principal holding the privilege through a namespace grant
// and two groups): the difference is the cost of one authorization query.
func BenchmarkLoadTableAuth(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) {
			st := openStoreTB(b, backend)
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			open := service.New(st, storage.NewProvider(), service.Options{Logger: quiet})
			rbac := service.New(st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st), Logger: quiet})
			_, err := open.CreateWarehouse(local, "wh", "file://"+b.TempDir(), nil)
			require.NoError(b, err)
			for _, ns := range [][]string{{"a"}, {"a", "b"}} {
				_, err = open.CreateNamespace(local, "wh", ns, nil)
				require.NoError(b, err)
			}
			_, err = open.Tables().CreateTable(local, "wh", []string{"a", "b"}, service.CreateTableInput{Name: "t", Schema: []byte(testSchema)})
			require.NoError(b, err)
			_, err = rbac.Admin().CreateRole(local, "r", "")
			require.NoError(b, err)
			require.NoError(b, rbac.Admin().GrantPrivilege(local, "r", service.Grant{Privilege: service.PrivTableReadMetadata, On: parseRes("namespace:wh/a")}))
			require.NoError(b, rbac.Admin().AssignRole(local, "r", service.Assignee{Kind: service.AssigneeGroup, Name: "g2"}))
			user := identity.With(context.Background(), identity.Principal{Source: identity.SourceOIDC, Subject: "u", Groups: []string{"g1", "g2"}})
			id := ident("a.b.t")
			run := func(b *testing.B, svc *service.Service, ctx context.Context) {
				for i := 0; i < b.N; i++ {
					if _, err := svc.Tables().LoadTable(ctx, "wh", id, "", service.NoDelegation); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.Run("allow-all", func(b *testing.B) { run(b, open, context.Background()) })
			b.Run("rbac", func(b *testing.B) { run(b, rbac, user) })
			cached := service.New(st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st).WithDecisionCache(time.Second), Logger: quiet})
			b.Run("rbac-cached-1s", func(b *testing.B) { run(b, cached, user) })
		})
	}
}

// openStoreTB is openStore for benchmarks.
func openStoreTB(tb testing.TB, backend string) *sqlstore.Store {
	var st *sqlstore.Store
	var err error
	if backend == "postgres" {
		st, err = sqlstore.OpenPostgres(context.Background(), pgtest.NewDatabase(tb), true)
	} else {
		st, err = sqlstore.OpenSQLite(context.Background(), filepath.Join(tb.TempDir(), "c.db"))
	}
	require.NoError(tb, err)
	tb.Cleanup(st.Close)
	return st
}

// TestRBACDecisionCache checks that cached decisions expire: a revoke
// applies within the cache's lifetime.
func TestRBACDecisionCache(t *testing.T) {
	fx := newRBACFixture(t, "sqlite")
	cached := service.New(fx.st, storage.NewProvider(), service.Options{
		Authorizer: access.NewRBAC(fx.st).WithDecisionCache(200 * time.Millisecond), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	ctx := fx.principal(t, "table-read-metadata@namespace:wh/a")
	_, err := cached.Tables().LoadTable(ctx, "wh", ident("a.b.c.t"), "", service.NoDelegation)
	require.NoError(t, err)
	role := fmt.Sprintf("role%d", fx.n)
	require.NoError(t, fx.svc.Admin().RevokePrivilege(local, role, service.Grant{Privilege: service.PrivTableReadMetadata, On: parseRes("namespace:wh/a")}))
	_, err = fx.svc.Tables().LoadTable(ctx, "wh", ident("a.b.c.t"), "", service.NoDelegation)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err), "uncached: revoked at once")
	require.Eventually(t, func() bool {
		_, err := cached.Tables().LoadTable(ctx, "wh", ident("a.b.c.t"), "", service.NoDelegation)
		return fault.KindOf(err) == fault.NoSuchTable
	}, 2*time.Second, 20*time.Millisecond, "the cached decision expires")
}
