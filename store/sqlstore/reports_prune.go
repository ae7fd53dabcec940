package sqlstore

import (
	"context"
	"time"
)

// reportPruneBatch is how many reports one prune statement deletes at
// most: on SQLite each statement holds the writer lock, so a commit
// waits for one batch, never for the whole prune.
const reportPruneBatch = 5000

// PruneReports implements store.Reports in three passes, each a loop of
// batched DELETEs (every batch its own statement, committed on its own)
// until a batch deletes fewer than the batch size: the retention's, on
// the receipt-time index; the sweep of reports whose table is gone (an
// anti-join, not NOT IN, which Postgres plans poorly); and, with keep >
// 0, the per-table, per-type cap.
func (s *Store) PruneReports(ctx context.Context, before time.Time, keep int) (int64, error) {
	n, err := s.pruneBatches(ctx, `DELETE FROM table_reports WHERE id IN (
		SELECT id FROM table_reports WHERE received_at < $1 LIMIT $2)`, before.UnixMilli())
	if err != nil {
		return n, err
	}
	gone, err := s.pruneBatches(ctx, `DELETE FROM table_reports WHERE id IN (
		SELECT r.id FROM table_reports r WHERE
		NOT EXISTS (SELECT 1 FROM catalog_objects o WHERE o.id = r.table_id)
		AND NOT EXISTS (SELECT 1 FROM deleted_objects d WHERE d.id = r.table_id)
		LIMIT $1)`)
	n += gone
	if err != nil || keep <= 0 {
		return n, err
	}
	over, err := s.trimReports(ctx, keep)
	return n + over, err
}

// reportGroup is one table's reports of one type.
type reportGroup struct{ tableID, typ string }

// trimReports deletes all but the newest keep reports of every table and
// type that has more, and returns how many went. The groups over the cap
// are read first (a read, which on SQLite does not hold the writer
// lock), then each group's oldest are deleted in batches below the
// keep-th newest.
func (s *Store) trimReports(ctx context.Context, keep int) (int64, error) {
	groups, err := s.reportGroupsOver(ctx, keep)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, g := range groups {
		var at, id int64
		// The first report past the cap: it and all older ones go.
		err := s.db.QueryRow(ctx, `SELECT received_at, id FROM table_reports
			WHERE table_id = $1 AND report_type = $2
			ORDER BY received_at DESC, id DESC LIMIT 1 OFFSET $3`, g.tableID, g.typ, keep).Scan(&at, &id)
		if err != nil {
			return n, s.wrap(err, "prune reports")
		}
		d, err := s.pruneBatches(ctx, `DELETE FROM table_reports WHERE id IN (
			SELECT id FROM table_reports WHERE table_id = $1 AND report_type = $2
			AND (received_at < $3 OR (received_at = $3 AND id <= $4)) LIMIT $5)`, g.tableID, g.typ, at, id)
		n += d
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// reportGroupsOver lists the tables and types with more than keep
// reports.
func (s *Store) reportGroupsOver(ctx context.Context, keep int) ([]reportGroup, error) {
	rows, err := s.db.Query(ctx, `SELECT table_id, report_type FROM table_reports
		GROUP BY table_id, report_type HAVING count(*) > $1`, keep)
	if err != nil {
		return nil, s.wrap(err, "prune reports")
	}
	defer rows.Close()
	var out []reportGroup
	for rows.Next() {
		var g reportGroup
		if err := rows.Scan(&g.tableID, &g.typ); err != nil {
			return nil, s.wrap(err, "prune reports")
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err, "prune reports")
	}
	return out, nil
}

// pruneBatches runs del, a DELETE whose last parameter is the batch size,
// with args and that size until it deletes fewer rows than the size, and
// returns how many rows went. A failed statement deleted nothing (it is
// its own transaction), so the count is that of the batches before it.
func (s *Store) pruneBatches(ctx context.Context, del string, args ...any) (int64, error) {
	batch := s.reportBatch
	if batch <= 0 {
		batch = reportPruneBatch
	}
	args = append(args, batch)
	var n int64
	for {
		d, err := s.db.Exec(ctx, del, args...)
		if err != nil {
			return n, s.wrap(err, "prune reports")
		}
		n += d
		if d < int64(batch) {
			return n, nil
		}
	}
}
