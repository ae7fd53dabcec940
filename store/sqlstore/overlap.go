package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// checkOverlap fails with store.ErrLocationOverlap when loc is equal to,
// inside, or contains the location of another table or view of the
// warehouse, live or soft-deleted: a deleted object keeps its location
// until it is forgotten, since its undrop needs the files and the end of
// its retention may purge them. selfID (or "") names the object being
// moved or undropped, whose own rows do not count. Both tables are read
// by one statement, so an object being soft-deleted meanwhile is seen in
// one of them. The caller holds the warehouse's lock (lockWarehouse).
func (s *Store) checkOverlap(ctx context.Context, q sqldb.Querier, whID, selfID, loc string) error {
	a := sqlArgs{}
	wh, self := a.add(whID), a.add(selfID)
	containing, inside := s.overlapConds(&a, loc)
	live := `SELECT location, 0 FROM catalog_objects WHERE warehouse_id = ` + wh + ` AND id <> ` + self + ` AND `
	// Each live condition in its own branch, so that each is one index
	// lookup; the soft-deleted rows are few and read once.
	rows, err := q.Query(ctx, live+containing+` UNION ALL `+live+inside+`
		 UNION ALL
		 SELECT location, 1 FROM deleted_objects WHERE warehouse_id = `+wh+` AND id <> `+self+` AND (`+containing+` OR `+inside+`)
		 LIMIT 1`, a.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var other string
		var deleted int
		if err := rows.Scan(&other, &deleted); err != nil {
			return err
		}
		if deleted == 1 {
			return fmt.Errorf("%w: %s overlaps %s (a soft-deleted object)", store.ErrLocationOverlap, loc, other)
		}
		return fmt.Errorf("%w: %s overlaps %s", store.ErrLocationOverlap, loc, other)
	}
	return rows.Err()
}

// overlapConds returns the conditions under which a location column
// equals or contains loc (the column is loc itself, or loc cut before one
// of its '/') and under which it lies inside loc (the column starts with
// loc + "/"). Each is an index lookup: the containing locations are
// listed (the index on (warehouse_id, location)), and "starts with loc/"
// is the byte range [loc + "/", loc + "0"), '0' being the byte after '/'.
// The range must compare bytes: SQLite's default collation does, on the
// same index; on Postgres the column is compared COLLATE "C" (the
// database's own collation may sort otherwise), served by migration 16's
// index on (warehouse_id, location COLLATE "C"). Before, each
// check compared every location of the warehouse, under the warehouse's
// lock, so creates slowed and queued as tables accumulated.
func (s *Store) overlapConds(a *sqlArgs, loc string) (containing, inside string) {
	locs := []string{a.add(loc)}
	for i := 0; i < len(loc); i++ {
		if loc[i] == '/' {
			locs = append(locs, a.add(loc[:i]))
		}
	}
	col := "location"
	if _, isPG := s.db.(*sqldb.Postgres); isPG {
		col = `(location COLLATE "C")`
	}
	lo, hi := a.add(loc+"/"), a.add(loc+"0")
	return "location IN (" + strings.Join(locs, ", ") + ")", "(" + col + " >= " + lo + " AND " + col + " < " + hi + ")"
}
