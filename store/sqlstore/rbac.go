package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// sqlArgs collects the arguments of a statement built at run time and
// hands out their $N placeholders.
type sqlArgs struct{ args []any }

func (a *sqlArgs) add(v any) string {
	a.args = append(a.args, v)
	return "$" + strconv.Itoa(len(a.args))
}

// assigneeCond matches role_assignments rows (alias a) of any assignee;
// none when the list is empty.
func (a *sqlArgs) assigneeCond(as []store.Assignee) string {
	if len(as) == 0 {
		return "(1 = 0)"
	}
	parts := make([]string, len(as))
	for i, x := range as {
		parts[i] = "(a.assignee_kind = " + a.add(x.Kind) + " AND a.assignee_name = " + a.add(x.Name) + ")"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// containerCond matches grants (alias g) on the server, the warehouse, or
// a namespace among levels and their prefixes: the containers of anything
// directly in the namespace levels (of the warehouse when levels is empty).
func (a *sqlArgs) containerCond(warehouse string, levels []string) string {
	c := "g.kind = 'server' OR (g.warehouse = " + a.add(warehouse) + " AND (g.kind = 'warehouse'"
	if len(levels) > 0 {
		keys := make([]string, len(levels))
		for i := range levels {
			keys[i] = a.add(nsKey(levels[:i+1]))
		}
		c += " OR (g.kind = 'namespace' AND g.ns_key IN (" + strings.Join(keys, ", ") + "))"
	}
	return c + "))"
}

// grantsOf joins the caller's assignments to their roles' grants.
const grantsOf = ` FROM role_assignments a JOIN role_grants g ON g.role_id = a.role_id WHERE `

// CheckAccess implements store.RBACStore: one aggregate over the caller's
// grants that cover the securable or lie below it.
func (s *Store) CheckAccess(ctx context.Context, q store.AccessQuery) (store.Access, error) {
	if len(q.Assignees) == 0 {
		return store.Access{}, nil
	}
	var a sqlArgs
	who := a.assigneeCond(q.Assignees)
	cover, below := a.coverCond(q.On), a.belowCond(q.On)
	cols := make([]string, len(q.Privileges))
	for i, p := range q.Privileges {
		cols[i] = "MAX(CASE WHEN g.privilege = " + a.add(p) + " AND (" + cover + ") THEN 1 ELSE 0 END)"
	}
	cols = append(cols, "COUNT(*)")
	sql := "SELECT " + strings.Join(cols, ", ") + grantsOf + who + " AND ((" + cover + ")"
	if below != "" {
		sql += " OR (" + below + ")"
	}
	sql += ")"
	held := make([]*int64, len(q.Privileges))
	dest := make([]any, 0, len(held)+1)
	for i := range held {
		dest = append(dest, &held[i])
	}
	var n int64
	dest = append(dest, &n)
	if err := s.db.QueryRow(ctx, sql, a.args...).Scan(dest...); err != nil {
		return store.Access{}, s.wrap(err, "check access")
	}
	out := store.Access{Visible: n > 0}
	for i, h := range held {
		if h != nil && *h == 1 {
			out.Held = append(out.Held, q.Privileges[i])
		}
	}
	return out, nil
}

// coverCond matches grants on the securable or on a container of it.
func (a *sqlArgs) coverCond(on store.Securable) string {
	switch on.Kind {
	case "server":
		return "g.kind = 'server'"
	case "warehouse":
		return a.containerCond(on.Warehouse, nil)
	case "namespace":
		return a.containerCond(on.Warehouse, on.Namespace)
	}
	return a.containerCond(on.Warehouse, on.Namespace) + " OR (g.warehouse = " + a.add(on.Warehouse) +
		" AND g.kind = " + a.add(on.Kind) + " AND g.ns_key = " + a.add(nsKey(on.Namespace)) + " AND g.name = " + a.add(on.Name) + ")"
}

// belowCond matches grants on anything inside the securable ("" for
// tables and views, which contain nothing).
func (a *sqlArgs) belowCond(on store.Securable) string {
	switch on.Kind {
	case "server":
		return "1 = 1"
	case "warehouse":
		return "g.warehouse = " + a.add(on.Warehouse)
	case "namespace":
		key := nsKey(on.Namespace)
		prefix := key + levelSep
		return "g.warehouse = " + a.add(on.Warehouse) + " AND ((g.kind IN ('table', 'view') AND g.ns_key = " + a.add(key) +
			") OR substr(g.ns_key, 1, " + a.add(int64(utf8.RuneCountInString(prefix))) + ") = " + a.add(prefix) + ")"
	}
	return ""
}

// visibleNamespaceCond is the EXISTS that keeps a child namespace (alias
// n) of parent visible: a grant on a container of it, on it, or below it.
func (a *sqlArgs) visibleNamespaceCond(v *store.Visibility, warehouse string, parent []string) string {
	who := a.assigneeCond(v.Assignees)
	wh := a.add(warehouse)
	sep := a.add(levelSep)
	return "EXISTS (SELECT 1" + grantsOf + who + " AND (" + a.containerCond(warehouse, parent) +
		" OR (g.warehouse = " + wh + " AND (g.ns_key = n.name_key OR substr(g.ns_key, 1, length(n.name_key) + 1) = n.name_key || CAST(" + sep + " AS TEXT)))))"
}

// filteredObjectList is the listing of names of one kind in a namespace
// that the assignees may see: the page of all names when they hold a grant
// on a container, united with the names granted one by one, found from the
// grants. Each half is cut to the page before the union. The container
// test sits in the LIMIT (0 without one) so that it is evaluated once and
// the namespace is not scanned at all when it fails; in the WHERE clause
// SQLite would scan the namespace testing it row by row.
func filteredObjectList(v *store.Visibility, warehouse string, levels []string, nsID, kind, after string, limit int64) (string, []any) {
	var a sqlArgs
	ns, k, af, lim := a.add(nsID), a.add(kind), a.add(after), a.add(limit)
	container := "EXISTS (SELECT 1" + grantsOf + a.assigneeCond(v.Assignees) + " AND (" + a.containerCond(warehouse, levels) + "))"
	direct := a.assigneeCond(v.Assignees) + " AND g.kind = " + k + " AND g.warehouse = " + a.add(warehouse) +
		" AND g.ns_key = " + a.add(nsKey(levels)) + " AND g.name > " + af
	// OFFSET 0 keeps both planners from turning the EXISTS into a join
	// driven by the namespace's objects: it stays one index probe per grant.
	exists := "EXISTS (SELECT 1 FROM catalog_objects o WHERE o.namespace_id = " + ns + " AND o.name = g.name AND o.kind = " + k + " LIMIT 1 OFFSET 0)"
	sql := `SELECT name FROM (
		SELECT name FROM (SELECT o.name FROM catalog_objects o WHERE o.namespace_id = ` + ns + ` AND o.kind = ` + k +
		` AND o.name > ` + af + ` ORDER BY o.name LIMIT CASE WHEN ` + container + ` THEN CAST(` + lim + ` AS BIGINT) ELSE CAST(0 AS BIGINT) END) all_names
		UNION
		SELECT name FROM (SELECT DISTINCT g.name` + grantsOf + direct + ` AND ` + exists + `
			ORDER BY g.name LIMIT ` + lim + `) granted_names
	) visible ORDER BY name LIMIT ` + lim
	return sql, a.args
}

// ---- roles ----

// RoleCreate implements store.RBACStore.
func (s *Store) RoleCreate(ctx context.Context, r *store.Role) error {
	r.ID = uuid.NewString()
	r.CreatedAt = s.clock.Now()
	_, err := s.db.Exec(ctx, `INSERT INTO roles (id, name, description, created_at) VALUES ($1, $2, $3, $4)`,
		r.ID, r.Name, r.Description, r.CreatedAt.UnixMilli())
	if err != nil && s.db.Classify(err) == sqldb.ClassUnique {
		return &store.AlreadyExistsError{Name: r.Name}
	}
	return s.wrap(err, "create role")
}

// RoleGet implements store.RBACStore.
func (s *Store) RoleGet(ctx context.Context, name string) (*store.Role, error) {
	var r store.Role
	var created int64
	err := s.db.QueryRow(ctx, `SELECT id, name, description, created_at FROM roles WHERE name = $1`, name).
		Scan(&r.ID, &r.Name, &r.Description, &created)
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil, fmt.Errorf("%w: %s", store.ErrNoSuchRole, name)
		}
		return nil, s.wrap(err, "get role")
	}
	r.CreatedAt = time.UnixMilli(created)
	return &r, nil
}

// RoleList implements store.RBACStore.
func (s *Store) RoleList(ctx context.Context) ([]*store.Role, error) {
	rows, err := s.db.Query(ctx, `SELECT id, name, description, created_at FROM roles ORDER BY name`)
	if err != nil {
		return nil, s.wrap(err, "list roles")
	}
	defer rows.Close()
	out := []*store.Role{}
	for rows.Next() {
		var r store.Role
		var created int64
		if err := rows.Scan(&r.ID, &r.Name, &r.Description, &created); err != nil {
			return nil, s.wrap(err, "list roles")
		}
		r.CreatedAt = time.UnixMilli(created)
		out = append(out, &r)
	}
	return out, s.wrap(rows.Err(), "list roles")
}

// RoleDelete implements store.RBACStore. Grants and assignments go in the
// same transaction (explicitly: SQLite's cascade depends on a pragma).
func (s *Store) RoleDelete(ctx context.Context, name string) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		id, err := s.roleID(ctx, q, name)
		if err != nil {
			return err
		}
		for _, t := range []string{"role_grants", "role_assignments", "roles"} {
			col := "role_id"
			if t == "roles" {
				col = "id"
			}
			if _, err := q.Exec(ctx, `DELETE FROM `+t+` WHERE `+col+` = $1`, id); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "delete role")
}

func (s *Store) roleID(ctx context.Context, q sqldb.Querier, name string) (string, error) {
	var id string
	if err := q.QueryRow(ctx, `SELECT id FROM roles WHERE name = $1`, name).Scan(&id); err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return "", fmt.Errorf("%w: %s", store.ErrNoSuchRole, name)
		}
		return "", err
	}
	return id, nil
}

// ---- grants ----

func grantKey(g store.Grant) []any {
	return []any{g.Privilege, g.On.Kind, g.On.Warehouse, nsKey(g.On.Namespace), g.On.Name}
}

// GrantAdd implements store.RBACStore.
func (s *Store) GrantAdd(ctx context.Context, role string, g store.Grant) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		id, err := s.roleID(ctx, q, role)
		if err != nil {
			return err
		}
		args := append([]any{id}, grantKey(g)...)
		_, err = q.Exec(ctx, `INSERT INTO role_grants (role_id, privilege, kind, warehouse, ns_key, name, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`, append(args, s.clock.Now().UnixMilli())...)
		return err
	})
	return s.wrap(err, "grant")
}

// GrantRevoke implements store.RBACStore.
func (s *Store) GrantRevoke(ctx context.Context, role string, g store.Grant) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		id, err := s.roleID(ctx, q, role)
		if err != nil {
			return err
		}
		n, err := q.Exec(ctx, `DELETE FROM role_grants WHERE role_id = $1 AND privilege = $2 AND kind = $3
			AND warehouse = $4 AND ns_key = $5 AND name = $6`, append([]any{id}, grantKey(g)...)...)
		if err == nil && n == 0 {
			return fmt.Errorf("%w: grant", store.ErrNotFound)
		}
		return err
	})
	return s.wrap(err, "revoke")
}

// GrantList implements store.RBACStore.
func (s *Store) GrantList(ctx context.Context, role string) ([]store.Grant, error) {
	id, err := s.roleID(ctx, s.db, role)
	if err != nil {
		return nil, s.wrap(err, "list grants")
	}
	rows, err := s.db.Query(ctx, `SELECT privilege, kind, warehouse, ns_key, name FROM role_grants WHERE role_id = $1
		ORDER BY kind, warehouse, ns_key, name, privilege`, id)
	if err != nil {
		return nil, s.wrap(err, "list grants")
	}
	defer rows.Close()
	out := []store.Grant{}
	for rows.Next() {
		var g store.Grant
		var key string
		if err := rows.Scan(&g.Privilege, &g.On.Kind, &g.On.Warehouse, &key, &g.On.Name); err != nil {
			return nil, s.wrap(err, "list grants")
		}
		if key != "" {
			g.On.Namespace = nsLevels(key)
		}
		out = append(out, g)
	}
	return out, s.wrap(rows.Err(), "list grants")
}

// ---- assignments ----

// AssignmentAdd implements store.RBACStore.
func (s *Store) AssignmentAdd(ctx context.Context, role string, as store.Assignee) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		id, err := s.roleID(ctx, q, role)
		if err != nil {
			return err
		}
		_, err = q.Exec(ctx, `INSERT INTO role_assignments (role_id, assignee_kind, assignee_name, created_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, id, as.Kind, as.Name, s.clock.Now().UnixMilli())
		return err
	})
	return s.wrap(err, "assign role")
}

// AssignmentRemove implements store.RBACStore.
func (s *Store) AssignmentRemove(ctx context.Context, role string, as store.Assignee) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		id, err := s.roleID(ctx, q, role)
		if err != nil {
			return err
		}
		n, err := q.Exec(ctx, `DELETE FROM role_assignments WHERE role_id = $1 AND assignee_kind = $2 AND assignee_name = $3`,
			id, as.Kind, as.Name)
		if err == nil && n == 0 {
			return fmt.Errorf("%w: assignment", store.ErrNotFound)
		}
		return err
	})
	return s.wrap(err, "unassign role")
}

// AssignmentList implements store.RBACStore.
func (s *Store) AssignmentList(ctx context.Context, role string) ([]store.Assignee, error) {
	id, err := s.roleID(ctx, s.db, role)
	if err != nil {
		return nil, s.wrap(err, "list assignments")
	}
	rows, err := s.db.Query(ctx, `SELECT assignee_kind, assignee_name FROM role_assignments WHERE role_id = $1
		ORDER BY assignee_kind, assignee_name`, id)
	if err != nil {
		return nil, s.wrap(err, "list assignments")
	}
	defer rows.Close()
	out := []store.Assignee{}
	for rows.Next() {
		var as store.Assignee
		if err := rows.Scan(&as.Kind, &as.Name); err != nil {
			return nil, s.wrap(err, "list assignments")
		}
		out = append(out, as)
	}
	return out, s.wrap(rows.Err(), "list assignments")
}
