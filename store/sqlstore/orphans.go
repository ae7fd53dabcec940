package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// candidateBatch bounds the locations of one statement.
const candidateBatch = 500

// ClaimOrphanCandidates implements store.OrphanCandidates. The first
// statement sets the table's orphan_hold, which locks its row until
// COMMIT: a swap of the table waits for the claim, or the claim for the
// swap, and on Postgres every later statement here reads what was
// committed before the lock was granted.
func (s *Store) ClaimOrphanCandidates(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error) {
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
		// A stale run may have deleted its candidates before it died: they
		// stay held, as tombstones.
		if _, err := q.Exec(ctx, `UPDATE orphan_candidates SET state = 'deleted', deleted_at = $4
			WHERE table_id = $1 AND run_id <> $2 AND claimed_at < $3 AND state = 'candidate'`,
			objectID, run, now.Add(-lease).UnixMilli(), now.UnixMilli()); err != nil {
			return err
		}
		if err := insertCandidates(ctx, q, objectID, run, now, locations); err != nil {
			return err
		}
		if held, err = runLocations(ctx, q, objectID, run); err != nil {
			return err
		}
		return setHold(ctx, q, objectID)
	})
	return held, s.wrap(err, "claim orphan candidates")
}

func insertCandidates(ctx context.Context, q sqldb.Querier, objectID, run string, now time.Time, locations []string) error {
	for start := 0; start < len(locations); start += candidateBatch {
		batch := locations[start:min(start+candidateBatch, len(locations))]
		var b strings.Builder
		b.WriteString(`INSERT INTO orphan_candidates (table_id, location, run_id, claimed_at) VALUES `)
		args := []any{objectID, run, now.UnixMilli()}
		for i, l := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			args = append(args, l)
			b.WriteString("($1, $" + strconv.Itoa(len(args)) + ", $2, $3)")
		}
		b.WriteString(` ON CONFLICT (table_id, location) DO NOTHING`)
		if _, err := q.Exec(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

func runLocations(ctx context.Context, q sqldb.Querier, objectID, run string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT location FROM orphan_candidates WHERE table_id = $1 AND run_id = $2 AND state = 'candidate'
		ORDER BY location`, objectID, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// setHold makes the table's orphan_hold say whether it has candidates.
func setHold(ctx context.Context, q sqldb.Querier, objectID string) error {
	_, err := q.Exec(ctx, `UPDATE catalog_objects SET orphan_hold =
		CASE WHEN EXISTS (SELECT 1 FROM orphan_candidates WHERE table_id = $1) THEN 1 ELSE 0 END WHERE id = $1`, objectID)
	return err
}

// RenewOrphanCandidates implements store.OrphanCandidates.
func (s *Store) RenewOrphanCandidates(ctx context.Context, objectID, run string) (int, error) {
	n, err := s.db.Exec(ctx, `UPDATE orphan_candidates SET claimed_at = $3 WHERE table_id = $1 AND run_id = $2 AND state = 'candidate'`,
		objectID, run, s.clock.Now().UnixMilli())
	return int(n), s.wrap(err, "renew orphan candidates")
}

// ReleaseOrphanCandidates implements store.OrphanCandidates. It locks the
// table's row first, as a claim does, so that the hold it recomputes
// counts every claim committed before it.
func (s *Store) ReleaseOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error {
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		if _, err := q.Exec(ctx, `UPDATE catalog_objects SET orphan_hold = orphan_hold WHERE id = $1`, objectID); err != nil {
			return err
		}
		if locations == nil {
			if _, err := q.Exec(ctx, `DELETE FROM orphan_candidates WHERE table_id = $1 AND run_id = $2 AND state = 'candidate'`, objectID, run); err != nil {
				return err
			}
		}
		for start := 0; start < len(locations); start += candidateBatch {
			batch := locations[start:min(start+candidateBatch, len(locations))]
			sql, args := candidatesIn(`DELETE FROM orphan_candidates WHERE table_id = $1 AND run_id = $2 AND state = 'candidate' AND location IN `,
				batch, objectID, run)
			if _, err := q.Exec(ctx, sql, args...); err != nil {
				return err
			}
		}
		return setHold(ctx, q, objectID)
	})
	return s.wrap(err, "release orphan candidates")
}

// candidatesIn is sql followed by "(…)" listing batch, with args before
// its parameters.
func candidatesIn(sql string, batch []string, args ...any) (string, []any) {
	list, vals := inList(len(args)+1, batch)
	return sql + "(" + list + ")", append(args, vals...)
}

// ListOrphanCandidates implements store.OrphanCandidates.
func (s *Store) ListOrphanCandidates(ctx context.Context, objectID string) ([]store.OrphanCandidate, error) {
	rows, err := s.db.Query(ctx, `SELECT location, run_id, claimed_at, state, COALESCE(deleted_at, 0)
		FROM orphan_candidates WHERE table_id = $1 ORDER BY location`, objectID)
	if err != nil {
		return nil, s.wrap(err, "list orphan candidates")
	}
	defer rows.Close()
	out := []store.OrphanCandidate{}
	for rows.Next() {
		c := store.OrphanCandidate{ObjectID: objectID}
		var at, del int64
		if err := rows.Scan(&c.Location, &c.RunID, &at, &c.State, &del); err != nil {
			return nil, s.wrap(err, "list orphan candidates")
		}
		c.ClaimedAt = time.UnixMilli(at)
		if del != 0 {
			c.DeletedAt = time.UnixMilli(del)
		}
		out = append(out, c)
	}
	return out, s.wrap(rows.Err(), "list orphan candidates")
}

// heldAdd checks, after a swap's UPDATE has locked the table's row (so
// that every claim ordered before the swap is visible), that the swap adds
// no file an orphan-file removal holds: an *store.OrphanHoldError naming
// the first such file, or naming none when the swap does not list its
// files and the table has any candidate.
func (s *Store) heldAdd(ctx context.Context, q sqldb.Querier, sw store.Swap) error {
	if !sw.AddsListed {
		var one int
		err := q.QueryRow(ctx, `SELECT 1 FROM orphan_candidates WHERE table_id = $1 LIMIT 1`, sw.ObjectID).Scan(&one)
		if err == nil {
			return &store.OrphanHoldError{ObjectID: sw.ObjectID}
		}
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil
		}
		return err
	}
	for start := 0; start < len(sw.Adds); start += candidateBatch {
		batch := sw.Adds[start:min(start+candidateBatch, len(sw.Adds))]
		sql, args := candidatesIn(`SELECT location FROM orphan_candidates WHERE table_id = $1 AND location IN `, batch, sw.ObjectID)
		var l string
		err := q.QueryRow(ctx, sql+` LIMIT 1`, args...).Scan(&l)
		if err == nil {
			return &store.OrphanHoldError{ObjectID: sw.ObjectID, Location: l}
		}
		if s.db.Classify(err) != sqldb.ClassNoRows {
			return err
		}
	}
	return nil
}
