package sqlstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// pendingBatch bounds the rows of one INSERT (4 parameters each), far
// under both databases' parameter limits.
const pendingBatch = 500

// AddPendingDeletes implements store.PendingDeletes: multi-row upserts in
// one transaction.
func (s *Store) AddPendingDeletes(ctx context.Context, rows []store.PendingDelete) error {
	if len(rows) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		for start := 0; start < len(rows); start += pendingBatch {
			batch := rows[start:min(start+pendingBatch, len(rows))]
			var b strings.Builder
			b.WriteString(`INSERT INTO pending_file_deletes (table_uuid, location, snapshot_ids, created_at) VALUES `)
			args := make([]any, 0, 4*len(batch))
			for i, r := range batch {
				if i > 0 {
					b.WriteString(", ")
				}
				n := len(args)
				b.WriteString("($" + strconv.Itoa(n+1) + ", $" + strconv.Itoa(n+2) + ", $" + strconv.Itoa(n+3) + ", $" + strconv.Itoa(n+4) + ")")
				args = append(args, r.TableUUID, r.Location, joinIDs(r.SnapshotIDs), r.CreatedAt.UnixMilli())
			}
			b.WriteString(` ON CONFLICT (table_uuid, location) DO UPDATE SET snapshot_ids = excluded.snapshot_ids, created_at = excluded.created_at`)
			if _, err := q.Exec(ctx, b.String(), args...); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "queue file deletes")
}

// ListPendingDeletes implements store.PendingDeletes.
func (s *Store) ListPendingDeletes(ctx context.Context, tableUUID string) ([]store.PendingDelete, error) {
	rows, err := s.db.Query(ctx, `SELECT location, snapshot_ids, created_at FROM pending_file_deletes
		WHERE table_uuid = $1 ORDER BY created_at, location`, tableUUID)
	if err != nil {
		return nil, s.wrap(err, "list queued file deletes")
	}
	defer rows.Close()
	out := []store.PendingDelete{}
	for rows.Next() {
		r := store.PendingDelete{TableUUID: tableUUID}
		var ids string
		var at int64
		if err := rows.Scan(&r.Location, &ids, &at); err != nil {
			return nil, s.wrap(err, "list queued file deletes")
		}
		if r.SnapshotIDs, err = splitIDs(ids); err != nil {
			return nil, s.wrap(err, "list queued file deletes")
		}
		r.CreatedAt = time.UnixMilli(at)
		out = append(out, r)
	}
	return out, s.wrap(rows.Err(), "list queued file deletes")
}

// RemovePendingDeletes implements store.PendingDeletes.
func (s *Store) RemovePendingDeletes(ctx context.Context, tableUUID string, locations []string) error {
	for start := 0; start < len(locations); start += pendingBatch {
		batch := locations[start:min(start+pendingBatch, len(locations))]
		var b strings.Builder
		b.WriteString(`DELETE FROM pending_file_deletes WHERE table_uuid = $1 AND location IN (`)
		args := []any{tableUUID}
		for i, l := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			args = append(args, l)
			b.WriteString("$" + strconv.Itoa(len(args)))
		}
		b.WriteByte(')')
		if _, err := s.db.Exec(ctx, b.String(), args...); err != nil {
			return s.wrap(err, "remove queued file deletes")
		}
	}
	return nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func splitIDs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}
