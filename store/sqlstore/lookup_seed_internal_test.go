package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// seedWarehouse is the warehouse the lookup tests and benchmarks fill.
const seedWarehouse = "wh"

// seedPerNamespace is how many tables each seeded namespace holds.
const seedPerNamespace = 100

// seedRef names the i-th seeded table: namespace i/100, table i%100. The
// locations sort as the indexes do, so table 0 comes first in every index
// (location included) and table n-1 last.
func seedRef(i int) store.ObjectRef {
	return store.ObjectRef{Warehouse: seedWarehouse, Namespace: []string{fmt.Sprintf("ns%05d", i/seedPerNamespace)},
		Name: fmt.Sprintf("t%05d", i%seedPerNamespace), Kind: store.KindTable}
}

func seedLocation(i int) string {
	r := seedRef(i)
	return "s3://bucket/wh/" + r.Namespace[0] + "/" + r.Name
}

// seedMetadata is a small table document, stored as it is (below rawBelow).
var seedMetadata = []byte(`{"format-version":2,"table-uuid":"00000000-0000-0000-0000-000000000000","location":"s3://bucket/wh","current-snapshot-id":-1}`)

// openSQLiteStore and openPostgresStore give a test or benchmark a fresh,
// migrated store.
func openSQLiteStore(tb testing.TB) *Store {
	tb.Helper()
	st, err := OpenSQLite(context.Background(), filepath.Join(tb.TempDir(), "catalog.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(st.Close)
	return st
}

func openPostgresStore(tb testing.TB) *Store {
	tb.Helper()
	st, err := OpenPostgres(context.Background(), pgtest.NewDatabase(tb), true)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(st.Close)
	return st
}

// seedTables creates the warehouse and n tables (seedRef(0) to
// seedRef(n-1)) through the store for the warehouse and namespaces and by
// multi-row INSERTs for the tables: the store's own create path checks
// overlaps and would take minutes at 100,000 tables.
func seedTables(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := context.Background()
	if err := s.WarehouseCreate(ctx, &store.Warehouse{Name: seedWarehouse, Location: "s3://bucket/wh"}); err != nil {
		tb.Fatal(err)
	}
	var whID string
	nsIDs := map[string]string{}
	for i := 0; i < n; i += seedPerNamespace {
		ns, err := s.NamespaceCreate(ctx, seedWarehouse, seedRef(i).Namespace, nil)
		if err != nil {
			tb.Fatal(err)
		}
		whID, nsIDs[ns.Levels[0]] = ns.WarehouseID, ns.ID
	}
	const batch = 200
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		var vals []string
		var args []any
		for i := lo; i < hi; i++ {
			r := seedRef(i)
			p := len(args)
			vals = append(vals, fmt.Sprintf("($%d, $%d, $%d, $%d, 'table', $%d, $%d, $%d, 2, 0)", p+1, p+2, p+3, p+4, p+5, p+6, p+7))
			args = append(args, uuid.NewString(), whID, nsIDs[r.Namespace[0]], r.Name, seedLocation(i),
				seedLocation(i)+"/metadata/00000.metadata.json", seedMetadata)
		}
		err := s.inTx(ctx, func(q sqldb.Querier) error {
			_, err := q.Exec(ctx, `INSERT INTO catalog_objects (id, warehouse_id, namespace_id, name, kind, location, metadata_location, metadata, format_version, updated_at) VALUES `+
				strings.Join(vals, ", "), args...)
			return err
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}
