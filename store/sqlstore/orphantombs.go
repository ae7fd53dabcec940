package sqlstore

import (
	"context"
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

// PruneOrphanTombstones implements store.OrphanCandidates: one
// transaction per table, which locks the table's row before it
// recomputes the hold, as a release does.
func (s *Store) PruneOrphanTombstones(ctx context.Context, objectID string, before time.Time) (int, error) {
	tables := []string{objectID}
	if objectID == "" {
		var err error
		if tables, err = s.tablesWithOldTombstones(ctx, before); err != nil {
			return 0, s.wrap(err, "prune orphan tombstones")
		}
	}
	total := 0
	for _, id := range tables {
		err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
			if _, err := q.Exec(ctx, `UPDATE catalog_objects SET orphan_hold = orphan_hold WHERE id = $1`, id); err != nil {
				return err
			}
			n, err := q.Exec(ctx, `DELETE FROM orphan_candidates WHERE table_id = $1 AND state = 'deleted' AND deleted_at < $2`,
				id, before.UnixMilli())
			if err != nil {
				return err
			}
			total += int(n)
			return setHold(ctx, q, id)
		})
		if err != nil {
			return total, s.wrap(err, "prune orphan tombstones")
		}
	}
	return total, nil
}

func (s *Store) tablesWithOldTombstones(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT table_id FROM orphan_candidates WHERE state = 'deleted' AND deleted_at < $1`,
		before.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

var _ store.OrphanCandidates = (*Store)(nil)
