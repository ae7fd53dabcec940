package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// TombstoneOrphanCandidates implements store.OrphanCandidates. The rows
// stay, so the table's hold does not change.
func (s *Store) TombstoneOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error {
	now := s.clock.Now().UnixMilli()
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		for start := 0; start < len(locations); start += candidateBatch {
			batch := locations[start:min(start+candidateBatch, len(locations))]
			sql, args := candidatesIn(`UPDATE orphan_candidates SET state = 'deleted', deleted_at = $3
				WHERE table_id = $1 AND run_id = $2 AND state = 'candidate' AND location IN `, batch, objectID, run, now)
			if _, err := q.Exec(ctx, sql, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "tombstone orphan candidates")
}

// PruneOrphanTombstones implements store.OrphanCandidates: it picks the
// oldest tombstones first, then prunes them in one transaction per table,
// which locks the table's row before it recomputes the hold, as a release
// does.
func (s *Store) PruneOrphanTombstones(ctx context.Context, objectID string, before time.Time, limit int) (int, error) {
	byTable, err := s.oldTombstones(ctx, objectID, before, limit)
	if err != nil {
		return 0, s.wrap(err, "prune orphan tombstones")
	}
	total := 0
	for id, locs := range byTable {
		err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
			if _, err := q.Exec(ctx, `UPDATE catalog_objects SET orphan_hold = orphan_hold WHERE id = $1`, id); err != nil {
				return err
			}
			for start := 0; start < len(locs); start += candidateBatch {
				batch := locs[start:min(start+candidateBatch, len(locs))]
				sql, args := candidatesIn(`DELETE FROM orphan_candidates WHERE table_id = $1 AND state = 'deleted' AND deleted_at < $2 AND location IN `,
					batch, id, before.UnixMilli())
				n, err := q.Exec(ctx, sql, args...)
				if err != nil {
					return err
				}
				total += int(n)
			}
			return setHold(ctx, q, id)
		})
		if err != nil {
			return total, s.wrap(err, "prune orphan tombstones")
		}
	}
	return total, nil
}

// oldTombstones returns the locations of the tombstones deleted before
// before (of objectID, or of every table when it is ""), by table, at
// most limit of them (oldest first) when limit > 0.
func (s *Store) oldTombstones(ctx context.Context, objectID string, before time.Time, limit int) (map[string][]string, error) {
	sql := `SELECT table_id, location FROM orphan_candidates WHERE state = 'deleted' AND deleted_at < $1 AND ($2 = '' OR table_id = $2)
		ORDER BY deleted_at, table_id, location`
	args := []any{before.UnixMilli(), objectID}
	if limit > 0 {
		sql += ` LIMIT $3`
		args = append(args, limit)
	}
	rows, err := s.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, loc string
		if err := rows.Scan(&id, &loc); err != nil {
			return nil, err
		}
		out[id] = append(out[id], loc)
	}
	return out, rows.Err()
}

// AdoptOrphanRows implements store.OrphanCandidates. Like a claim, its
// first statement locks the table's row.
func (s *Store) AdoptOrphanRows(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error) {
	var held []string
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		n, err := q.Exec(ctx, `UPDATE catalog_objects SET orphan_hold = 1 WHERE id = $1 AND kind = 'table'`, objectID)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: object %s", store.ErrNoSuchTable, objectID)
		}
		now := s.clock.Now()
		for start := 0; start < len(locations); start += candidateBatch {
			batch := locations[start:min(start+candidateBatch, len(locations))]
			sql, args := candidatesIn(`UPDATE orphan_candidates SET run_id = $2, claimed_at = $3, state = 'candidate', deleted_at = NULL
				WHERE table_id = $1 AND (state = 'deleted' OR (run_id <> $2 AND claimed_at < $4)) AND location IN `,
				batch, objectID, run, now.UnixMilli(), now.Add(-lease).UnixMilli())
			if _, err := q.Exec(ctx, sql, args...); err != nil {
				return err
			}
		}
		if held, err = runLocations(ctx, q, objectID, run); err != nil {
			return err
		}
		return setHold(ctx, q, objectID)
	})
	return held, s.wrap(err, "adopt orphan rows")
}

var _ store.OrphanCandidates = (*Store)(nil)
