package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// ReportAdd implements store.Reports. The table's id is read and the row
// inserted in one statement, so a report never names a table that was
// gone when it was stored. (One that races the table's removal for good
// may outlive it until the next PruneReports.) The values are cast so
// that Postgres types the parameters of the SELECT list.
func (s *Store) ReportAdd(ctx context.Context, ref store.ObjectRef, r *store.Report) error {
	now := s.clock.Now()
	err := s.db.QueryRow(ctx, `INSERT INTO table_reports (table_id, report_type, received_at, snapshot_id, body)
		SELECT o.id, CAST($5 AS TEXT), CAST($6 AS BIGINT), CAST($7 AS BIGINT), CAST($8 AS TEXT)`+objectByName+`
		RETURNING id, table_id`,
		ref.Warehouse, nsKey(ref.Namespace), ref.Name, string(store.KindTable),
		r.Type, now.UnixMilli(), r.SnapshotID, string(r.Body)).Scan(&r.ID, &r.TableID)
	if err != nil && s.db.Classify(err) == sqldb.ClassNoRows {
		return notFound(ref)
	}
	if err != nil {
		return s.wrap(err, "store report")
	}
	r.ReceivedAt = time.UnixMilli(now.UnixMilli()).UTC()
	return nil
}

// ReportList implements store.Reports.
func (s *Store) ReportList(ctx context.Context, ref store.ObjectRef, f store.ReportFilter, page store.Page) ([]*store.Report, string, error) {
	var tableID string
	err := s.db.QueryRow(ctx, `SELECT o.id`+objectByName, ref.Warehouse, nsKey(ref.Namespace), ref.Name,
		string(store.KindTable)).Scan(&tableID)
	if err != nil && s.db.Classify(err) == sqldb.ClassNoRows {
		return nil, "", notFound(store.ObjectRef{Warehouse: ref.Warehouse, Namespace: ref.Namespace, Name: ref.Name, Kind: store.KindTable})
	}
	if err != nil {
		return nil, "", s.wrap(err, "list reports")
	}
	where := []string{`table_id = $1`}
	args := []any{tableID}
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if f.Type != "" {
		where = append(where, `report_type = `+arg(f.Type))
	}
	if !f.Since.IsZero() {
		where = append(where, `received_at >= `+arg(f.Since.UnixMilli()))
	}
	if page.Token != "" {
		at, id, err := reportCursor(page.Token)
		if err != nil {
			return nil, "", err
		}
		a, i := arg(at), arg(id)
		where = append(where, `(received_at < `+a+` OR (received_at = `+a+` AND id < `+i+`))`)
	}
	size := page.Size
	if size <= 0 {
		size = 100
	}
	rows, err := s.db.Query(ctx, `SELECT id, table_id, report_type, received_at, snapshot_id, body FROM table_reports
		WHERE `+strings.Join(where, " AND ")+` ORDER BY received_at DESC, id DESC LIMIT `+arg(probeLimit(size)), args...)
	if err != nil {
		return nil, "", s.wrap(err, "list reports")
	}
	defer rows.Close()
	var out []*store.Report
	for rows.Next() {
		r := &store.Report{}
		var at int64
		var body string
		if err := rows.Scan(&r.ID, &r.TableID, &r.Type, &at, &r.SnapshotID, &body); err != nil {
			return nil, "", s.wrap(err, "list reports")
		}
		r.ReceivedAt = time.UnixMilli(at).UTC()
		r.Body = json.RawMessage(body)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", s.wrap(err, "list reports")
	}
	next := ""
	if len(out) > size {
		out = out[:size]
		last := out[size-1]
		next = encodeToken("rp1|" + strconv.FormatInt(last.ReceivedAt.UnixMilli(), 10) + "|" + strconv.FormatInt(last.ID, 10))
	}
	return out, next, nil
}

// reportCursor reads a ReportList token: the receipt time and id of the
// last report of the previous page.
func reportCursor(tok string) (int64, int64, error) {
	last, err := decodeToken(tok)
	if err != nil {
		return 0, 0, err
	}
	parts := strings.Split(last, "|")
	if len(parts) == 3 && parts[0] == "rp1" {
		at, err1 := strconv.ParseInt(parts[1], 10, 64)
		id, err2 := strconv.ParseInt(parts[2], 10, 64)
		if err1 == nil && err2 == nil {
			return at, id, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: invalid page token", store.ErrInvalidPageToken)
}

// deleteReports removes the reports of the table whose row is id, in the
// transaction of q that removes the table for good.
func deleteReports(ctx context.Context, q sqldb.Querier, id string) error {
	_, err := q.Exec(ctx, `DELETE FROM table_reports WHERE table_id = $1`, id)
	return err
}
