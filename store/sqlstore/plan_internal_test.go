package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// hotLookup is a statement on the path of every request for a table,
// with the indexes it may read each table through, each named by its
// columns ("namespace_id,name"; "expr" for an expression). Any other
// access — a full scan, another index, a sort — fails the test.
type hotLookup struct {
	name string
	sql  string
	args []any
	want map[string][]string
}

const (
	byWarehouseName = "name"
	byNamespaceKey  = "warehouse_id,name_key"
	byObjectName    = "namespace_id,name"
	byObjectKind    = "namespace_id,kind,name"
	byID            = "id"
)

// hotLookups lists the statements of load, HEAD, list, commit, namespace
// and view lookups with arguments naming the table seedRef(i).
func hotLookups(i int) []hotLookup {
	r := seedRef(i)
	ns := nsKey(r.Namespace)
	point := map[string][]string{
		"warehouses": {byWarehouseName}, "namespaces": {byNamespaceKey},
		// Both are exact: every column of the index is bound by '='.
		"catalog_objects": {byObjectName, byObjectKind},
	}
	swapSQL, swapArgs := swapStatement(store.Swap{ObjectID: "id", ExpectedMetadataLocation: "a", NewMetadataLocation: "b",
		NewMetadata: seedMetadata, NewFormatVersion: 2}, time.UnixMilli(0), true)
	listWant := map[string][]string{"warehouses": {byWarehouseName}, "namespaces": {byNamespaceKey}, "catalog_objects": {byObjectKind}}
	return []hotLookup{
		{"load table", `SELECT ` + objectCols + objectByName, []any{r.Warehouse, ns, r.Name, "table"}, point},
		{"load table refs", `SELECT ` + objectRefsCols + objectByName, []any{r.Warehouse, ns, r.Name, "table"}, point},
		{"load view", `SELECT ` + objectCols + objectByName, []any{r.Warehouse, ns, r.Name, "view"}, point},
		{"exists", `SELECT o.metadata_location` + objectByName, []any{r.Warehouse, ns, r.Name, "table"}, point},
		{"list first page", objectListSQL, []any{r.Warehouse, ns, "table", "", probeLimit(50)}, listWant},
		{"list next page", objectListSQL, []any{r.Warehouse, ns, "table", r.Name, probeLimit(50)}, listWant},
		{"commit swap", swapSQL, swapArgs, map[string][]string{"catalog_objects": {byID}}},
		{"namespace", `SELECT n.id, n.warehouse_id` + namespaceByName, []any{r.Warehouse, ns},
			map[string][]string{"warehouses": {byWarehouseName}, "namespaces": {byNamespaceKey}}},
		{"name taken", existingKindSQL, []any{"ns-id", r.Name}, map[string][]string{"catalog_objects": {byObjectName, byObjectKind}}},
	}
}

// TestLookupPlansSQLite and TestLookupPlansPostgres check the plan of
// every hot lookup on an empty database, after ANALYZE of the empty
// database, after 3,000 tables were added to it (statistics now stale)
// and after a fresh ANALYZE: plans must not depend on statistics.
func TestLookupPlansSQLite(t *testing.T) {
	checkPlans(t, openSQLiteStore(t), func(t *testing.T, s *Store, l hotLookup) { checkSQLitePlan(t, s, l) })
}

func TestLookupPlansPostgres(t *testing.T) {
	checkPlans(t, openPostgresStore(t), func(t *testing.T, s *Store, l hotLookup) {
		checkPostgresPlan(t, s, l, false)
		checkPostgresPlan(t, s, l, true)
	})
}

func checkPlans(t *testing.T, s *Store, check func(*testing.T, *Store, hotLookup)) {
	const n = 3000
	ctx := context.Background()
	analyze := func(t *testing.T) {
		_, err := s.db.Exec(ctx, `ANALYZE`)
		require.NoError(t, err)
	}
	steps := []struct {
		name string
		do   func(*testing.T)
	}{
		{"empty", func(*testing.T) {}},
		{"empty analyzed", analyze},
		{"filled stale", func(t *testing.T) { seedTables(t, s, n); seedNamespaces(t, s, 1000) }},
		{"filled analyzed", analyze},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			step.do(t)
			for _, i := range []int{0, n - 1} {
				for _, l := range hotLookups(i) {
					t.Run(fmt.Sprintf("%s/%d", l.name, i), func(t *testing.T) { check(t, s, l) })
				}
			}
		})
	}
}

// smallTable is the most rows a table may hold for a full scan of it to
// pass: Postgres and SQLite rightly scan a table that small, and the
// filled database has more rows in every table whose size grows with the
// catalog (catalog_objects, namespaces), so a scan of those fails.
const smallTable = 100

func tableRows(t *testing.T, s *Store, table string) int {
	var n int
	require.NoError(t, s.db.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
	return n
}

// seedNamespaces adds n empty namespaces to the seeded warehouse, so that
// a scan of namespaces reads many rows.
func seedNamespaces(t *testing.T, s *Store, n int) {
	ctx := context.Background()
	var whID string
	require.NoError(t, s.db.QueryRow(ctx, `SELECT id FROM warehouses WHERE name = $1`, seedWarehouse).Scan(&whID))
	require.NoError(t, s.inTx(ctx, func(q sqldb.Querier) error {
		for i := range n {
			if _, err := q.Exec(ctx, `INSERT INTO namespaces (id, warehouse_id, name_key, parent_key) VALUES ($1, $2, $3, '')`,
				fmt.Sprintf("extra-%d", i), whID, fmt.Sprintf("extra%05d", i)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// sqliteAccess matches one table's access in EXPLAIN QUERY PLAN.
var sqliteAccess = regexp.MustCompile(`^(SEARCH|SCAN) (\S+)(?: AS \S+)?(?: USING (?:COVERING )?INDEX (\S+))?`)

var aliases = map[string]string{"w": "warehouses", "n": "namespaces", "o": "catalog_objects"}

func checkSQLitePlan(t *testing.T, s *Store, l hotLookup) {
	ctx := context.Background()
	rows, err := s.db.Query(ctx, `EXPLAIN QUERY PLAN `+l.sql, l.args...)
	require.NoError(t, err)
	var details []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		details = append(details, detail)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	plan := strings.Join(details, "\n")
	seen := map[string]bool{}
	for _, d := range details {
		if strings.HasPrefix(d, "USE TEMP B-TREE") {
			t.Errorf("%s sorts:\n%s", l.name, plan)
		}
		m := sqliteAccess.FindStringSubmatch(d)
		if m == nil {
			continue
		}
		table := m[2]
		if full, ok := aliases[table]; ok {
			table = full
		}
		seen[table] = true
		if m[1] == "SCAN" || m[3] == "" {
			if rows := tableRows(t, s, table); rows > smallTable {
				t.Errorf("%s scans %s (%d rows):\n%s", l.name, table, rows, plan)
			}
			continue
		}
		cols := sqliteIndexColumns(t, s, m[3])
		require.Containsf(t, l.want[table], cols, "%s reads %s through index %s (%s):\n%s", l.name, table, m[3], cols, plan)
	}
	for table := range l.want {
		require.Truef(t, seen[table], "%s does not read %s:\n%s", l.name, table, plan)
	}
}

func sqliteIndexColumns(t *testing.T, s *Store, index string) string {
	rows, err := s.db.Query(context.Background(), `SELECT name FROM pragma_index_info($1) ORDER BY seqno`, index)
	require.NoError(t, err)
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		cols = append(cols, c)
	}
	require.NoError(t, rows.Err())
	return strings.Join(cols, ",")
}

// pgPlanNode is the part of an EXPLAIN (FORMAT JSON) node the test reads.
type pgPlanNode struct {
	NodeType  string       `json:"Node Type"`
	Relation  string       `json:"Relation Name"`
	IndexName string       `json:"Index Name"`
	Plans     []pgPlanNode `json:"Plans"`
}

// checkPostgresPlan explains l with its arguments (the custom plan), or,
// with generic set, the generic plan Postgres caches for a prepared
// statement after five runs, which knows no argument values.
func checkPostgresPlan(t *testing.T, s *Store, l hotLookup, generic bool) {
	ctx := context.Background()
	var raw string
	err := s.db.Begin(ctx, func(q sqldb.Querier) error {
		if !generic {
			return q.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+l.sql, l.args...).Scan(&raw)
		}
		if _, err := q.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `PREPARE plan_probe AS `+l.sql); err != nil {
			return err
		}
		defer q.Exec(ctx, `DEALLOCATE plan_probe`) //nolint:errcheck // the transaction ends anyway
		lits := make([]string, len(l.args))
		for i, a := range l.args {
			lits[i] = pgLiteral(a)
		}
		return q.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE plan_probe(`+strings.Join(lits, ", ")+`)`).Scan(&raw)
	})
	require.NoError(t, err)
	var plans []struct {
		Plan pgPlanNode `json:"Plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &plans))
	seen := map[string]bool{}
	var walk func(n pgPlanNode)
	walk = func(n pgPlanNode) {
		switch {
		case n.NodeType == "Sort" || n.NodeType == "Incremental Sort":
			for _, table := range n.relations() {
				if rows := tableRows(t, s, table); rows > smallTable {
					t.Errorf("%s (generic %v) sorts %s (%d rows):\n%s", l.name, generic, table, rows, raw)
				}
			}
		case n.NodeType == "Seq Scan":
			seen[n.Relation] = true
			if rows := tableRows(t, s, n.Relation); rows > smallTable {
				t.Errorf("%s (generic %v) scans %s (%d rows):\n%s", l.name, generic, n.Relation, rows, raw)
			}
		case n.IndexName != "":
			table := n.Relation
			if table == "" { // a Bitmap Index Scan names only its index
				table = pgIndexTable(t, s, n.IndexName)
			}
			seen[table] = true
			cols := pgIndexColumns(t, s, n.IndexName)
			if !contains(l.want[table], cols) {
				t.Errorf("%s (generic %v) reads %s through %s (%s):\n%s", l.name, generic, table, n.IndexName, cols, raw)
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plans[0].Plan)
	for table := range l.want {
		if !seen[table] {
			t.Errorf("%s (generic %v) does not read %s:\n%s", l.name, generic, table, raw)
		}
	}
}

// relations lists the tables read under n.
func (n pgPlanNode) relations() []string {
	var out []string
	if n.Relation != "" {
		out = append(out, n.Relation)
	}
	for _, c := range n.Plans {
		out = append(out, c.relations()...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pgLiteral writes a test argument as an SQL literal for EXECUTE.
func pgLiteral(a any) string {
	switch v := a.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
	default:
		return fmt.Sprint(v)
	}
}

func pgIndexTable(t *testing.T, s *Store, index string) string {
	var table string
	require.NoError(t, s.db.QueryRow(context.Background(),
		`SELECT t.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		 WHERE i.relname = $1`, index).Scan(&table))
	return table
}

func pgIndexColumns(t *testing.T, s *Store, index string) string {
	var cols string
	require.NoError(t, s.db.QueryRow(context.Background(),
		`SELECT string_agg(COALESCE(a.attname, 'expr'), ',' ORDER BY k.ord)
		 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		 CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
		 LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
		 WHERE i.relname = $1`, index).Scan(&cols))
	return cols
}
