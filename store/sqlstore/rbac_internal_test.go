package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
)

func openBackend(tb testing.TB, backend string) *Store {
	ctx := context.Background()
	var st *Store
	var err error
	if backend == "postgres" {
		st, err = OpenPostgres(ctx, pgtest.NewDatabase(tb), true)
	} else {
		st, err = OpenSQLite(ctx, filepath.Join(tb.TempDir(), "c.db"))
	}
	require.NoError(tb, err)
	tb.Cleanup(st.Close)
	return st
}

// bulkTables inserts n tables t00000... into namespace ns of warehouse wh,
// many rows per statement: the store's own create path checks location
// overlap per row, which would make 10,000 rows slow to set up.
func bulkTables(tb testing.TB, st *Store, wh string, ns []string, n int) {
	ctx := context.Background()
	nsRow, err := st.NamespaceGet(ctx, wh, ns)
	require.NoError(tb, err)
	const batch = 200
	for start := 0; start < n; start += batch {
		var a sqlArgs
		var rows []string
		for i := start; i < start+batch && i < n; i++ {
			name := fmt.Sprintf("t%05d", i)
			loc := "file:///w/" + strings.Join(ns, "/") + "/" + name
			rows = append(rows, "("+strings.Join([]string{a.add(nsRow.ID + name), a.add(nsRow.WarehouseID), a.add(nsRow.ID),
				a.add(name), "'table'", a.add(loc), a.add(loc + "/m.json"), a.add(pack([]byte("{}"))), "2", "0"}, ", ")+")")
		}
		_, err := st.db.Exec(ctx, `INSERT INTO catalog_objects (id, warehouse_id, namespace_id, name, kind, location,
			metadata_location, metadata, format_version, updated_at) VALUES `+strings.Join(rows, ", "), a.args...)
		require.NoError(tb, err)
	}
}

type listFixture struct {
	st  *Store
	vis *store.Visibility
}

// newListFixture: warehouse wh with namespaces ns (n tables) and other;
// role r, assigned to oidc:u, holds table-read-metadata on every 100th
// table of ns, on a table of other, and on a name in ns with no table.
func newListFixture(tb testing.TB, backend string, n int) *listFixture {
	ctx := context.Background()
	st := openBackend(tb, backend)
	require.NoError(tb, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///w"}))
	for _, ns := range []string{"ns", "other"} {
		_, err := st.NamespaceCreate(ctx, "wh", []string{ns}, nil)
		require.NoError(tb, err)
	}
	bulkTables(tb, st, "wh", []string{"ns"}, n)
	require.NoError(tb, st.RoleCreate(ctx, &store.Role{Name: "r"}))
	grant := func(ns, name string) {
		require.NoError(tb, st.GrantAdd(ctx, "r", store.Grant{Privilege: "table-read-metadata",
			On: store.Securable{Kind: "table", Warehouse: "wh", Namespace: []string{ns}, Name: name}}))
	}
	for i := 0; i < n; i += 100 {
		grant("ns", fmt.Sprintf("t%05d", i))
	}
	grant("other", "t00001")
	grant("ns", "no-such-table")
	as := store.Assignee{Kind: "oidc", Name: "u"}
	require.NoError(tb, st.AssignmentAdd(ctx, "r", as))
	if backend == "postgres" {
		// What autovacuum does after a bulk load: plans need row counts.
		_, err := st.db.Exec(ctx, `ANALYZE`)
		require.NoError(tb, err)
	}
	return &listFixture{st: st, vis: &store.Visibility{Assignees: []store.Assignee{{Kind: "group", Name: "g"}, as}}}
}

func listAll(t *testing.T, st *Store, vis *store.Visibility, size int) []string {
	var out []string
	tok := ""
	for {
		names, next, err := st.ObjectList(context.Background(), "wh", []string{"ns"}, store.KindTable, store.Page{Token: tok, Size: size, Visible: vis})
		require.NoError(t, err)
		require.LessOrEqual(t, len(names), size)
		out = append(out, names...)
		if next == "" {
			return out
		}
		tok = next
	}
}

// TestFilteredTableListPages lists 10,000 tables of which 100 are granted
// in pages of 30: exactly those 100, in order, across pages.
func TestFilteredTableListPages(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			fx := newListFixture(t, backend, 10000)
			var want []string
			for i := 0; i < 10000; i += 100 {
				want = append(want, fmt.Sprintf("t%05d", i))
			}
			require.Equal(t, want, listAll(t, fx.st, fx.vis, 30))
			require.Equal(t, want, listAll(t, fx.st, fx.vis, 100), "a full last page ends the listing")
			unpaged, next, err := fx.st.ObjectList(context.Background(), "wh", []string{"ns"}, store.KindTable, store.Page{Visible: fx.vis})
			require.NoError(t, err)
			require.Equal(t, want, unpaged, "no page size: everything visible")
			require.Empty(t, next)
			require.Empty(t, listAll(t, fx.st, &store.Visibility{}, 30), "no assignees: nothing")
			require.Empty(t, listAll(t, fx.st, &store.Visibility{Assignees: []store.Assignee{{Kind: "builtin", Name: "u"}}}, 30))

			// A grant on a container makes every table visible.
			ctx := context.Background()
			require.NoError(t, fx.st.GrantAdd(ctx, "r", store.Grant{Privilege: "namespace-create",
				On: store.Securable{Kind: "namespace", Warehouse: "wh", Namespace: []string{"ns"}}}))
			all := listAll(t, fx.st, fx.vis, 700)
			require.Len(t, all, 10000)
			require.Equal(t, all, listAll(t, fx.st, nil, 700))
		})
	}
}

// TestFilteredNamespaceList checks namespace visibility: a grant on the
// namespace, on a container, or on anything below it.
func TestFilteredNamespaceList(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openBackend(t, backend)
			require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///w"}))
			require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh2", Location: "file:///w2"}))
			for _, ns := range []string{"a", "a.b", "a.b.c", "a.bx", "ab", "x", "y"} {
				_, err := st.NamespaceCreate(ctx, "wh", strings.Split(ns, "."), nil)
				require.NoError(t, err)
			}
			_, err := st.NamespaceCreate(ctx, "wh2", []string{"z"}, nil)
			require.NoError(t, err)
			require.NoError(t, st.RoleCreate(ctx, &store.Role{Name: "r"}))
			require.NoError(t, st.AssignmentAdd(ctx, "r", store.Assignee{Kind: "oidc", Name: "u"}))
			vis := &store.Visibility{Assignees: []store.Assignee{{Kind: "oidc", Name: "u"}}}
			list := func(wh string, parent ...string) string {
				out, _, err := st.NamespaceList(ctx, wh, parent, store.Page{Visible: vis})
				require.NoError(t, err)
				var s []string
				for _, l := range out {
					s = append(s, strings.Join(l, "."))
				}
				return strings.Join(s, " ")
			}
			grant := func(priv, kind, wh, ns, name string) {
				var levels []string
				if ns != "" {
					levels = strings.Split(ns, ".")
				}
				require.NoError(t, st.GrantAdd(ctx, "r", store.Grant{Privilege: priv,
					On: store.Securable{Kind: kind, Warehouse: wh, Namespace: levels, Name: name}}))
			}
			require.Equal(t, "", list("wh"))
			grant("table-list", "table", "wh", "a.b.c", "t") // below a and a.b, not a.bx or ab
			require.Equal(t, "a", list("wh"))
			require.Equal(t, "a.b", list("wh", "a"))
			require.Equal(t, "a.b.c", list("wh", "a", "b"))
			require.Equal(t, "", list("wh2"))
			grant("namespace-list", "namespace", "wh", "a", "") // a container of every child of a
			require.Equal(t, "a.b a.bx", list("wh", "a"))
			require.Equal(t, "a", list("wh"))
			grant("table-create", "namespace", "wh", "y", "")
			require.Equal(t, "a y", list("wh"))
			grant("view-read", "warehouse", "wh", "", "")
			require.Equal(t, "a ab x y", list("wh"))
			require.Equal(t, "", list("wh2"))
			grant("manage-grants", "server", "", "", "")
			require.Equal(t, "z", list("wh2"))
		})
	}
}

// TestCheckAccess checks the held and visible answers of one query.
func TestCheckAccess(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openBackend(t, backend)
			require.NoError(t, st.RoleCreate(ctx, &store.Role{Name: "r"}))
			require.NoError(t, st.AssignmentAdd(ctx, "r", store.Assignee{Kind: "group", Name: "g"}))
			require.NoError(t, st.GrantAdd(ctx, "r", store.Grant{Privilege: "table-read-data",
				On: store.Securable{Kind: "namespace", Warehouse: "wh", Namespace: []string{"a", "b"}}}))
			who := []store.Assignee{{Kind: "group", Name: "g"}}
			check := func(privs []string, on store.Securable) store.Access {
				acc, err := st.CheckAccess(ctx, store.AccessQuery{Assignees: who, Privileges: privs, On: on})
				require.NoError(t, err)
				return acc
			}
			tbl := func(ns string) store.Securable {
				return store.Securable{Kind: "table", Warehouse: "wh", Namespace: strings.Split(ns, "."), Name: "t"}
			}
			require.Equal(t, store.Access{Held: []string{"table-read-data"}, Visible: true},
				check([]string{"table-write-data", "table-read-data"}, tbl("a.b.c")))
			require.Equal(t, store.Access{Visible: true}, check([]string{"table-write-data"}, tbl("a.b")))
			require.Equal(t, store.Access{}, check([]string{"table-read-data"}, tbl("a")))
			require.Equal(t, store.Access{}, check([]string{"table-read-data"}, tbl("a.bb")))
			require.Equal(t, store.Access{Visible: true}, check([]string{"table-read-data"}, store.Securable{Kind: "namespace", Warehouse: "wh", Namespace: []string{"a"}}))
			require.Equal(t, store.Access{Visible: true}, check([]string{"table-read-data"}, store.Securable{Kind: "warehouse", Warehouse: "wh"}))
			require.Equal(t, store.Access{}, check([]string{"table-read-data"}, store.Securable{Kind: "warehouse", Warehouse: "wh2"}))
			require.Equal(t, store.Access{Visible: true}, check([]string{"manage-grants"}, store.Securable{Kind: "server"}))
			require.NoError(t, st.RoleDelete(ctx, "r"))
			require.Equal(t, store.Access{}, check([]string{"table-read-data"}, tbl("a.b.c")), "deleting a role drops its grants")
		})
	}
}

// BenchmarkTableList compares a filtered page (100 visible of 10,000) with
// an unfiltered page of 100. Run with -bench TableList -benchtime 200x.
func BenchmarkTableList(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			fx := newListFixture(b, backend, 10000)
			run := func(b *testing.B, vis *store.Visibility) {
				for i := 0; i < b.N; i++ {
					names, _, err := fx.st.ObjectList(context.Background(), "wh", []string{"ns"}, store.KindTable, store.Page{Size: 100, Visible: vis})
					if err != nil || len(names) != 100 {
						b.Fatalf("%d names, %v", len(names), err)
					}
				}
			}
			b.Run("unfiltered", func(b *testing.B) { run(b, nil) })
			b.Run("filtered", func(b *testing.B) { run(b, fx.vis) })
		})
	}
}

// BenchmarkCheckAccess is the cost of one authorization query on a table
// three namespace levels deep, for a principal with two groups.
func BenchmarkCheckAccess(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			fx := newListFixture(b, backend, 100)
			q := store.AccessQuery{Assignees: append(fx.vis.Assignees, store.Assignee{Kind: "group", Name: "g2"}),
				Privileges: []string{"table-read-metadata"},
				On:         store.Securable{Kind: "table", Warehouse: "wh", Namespace: []string{"ns"}, Name: "t00000"}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				acc, err := fx.st.CheckAccess(context.Background(), q)
				if err != nil || len(acc.Held) != 1 {
					b.Fatalf("%+v %v", acc, err)
				}
			}
		})
	}
}
