package sqlstore

import (
	"context"
	"time"
)

// Clock implements store.Store: the database server's clock, read in one
// round trip. Postgres reads clock_timestamp() (the time of the statement's
// execution, in microseconds, not the transaction start); SQLite reads the
// host clock through julianday('now'), which is the replica's own clock
// (an embedded database is not shared across hosts).
func (s *Store) Clock(ctx context.Context) (time.Time, error) {
	if _, isPG := s.db.(*pgDriver); isPG {
		var us int64
		if err := s.db.queryRow(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&us); err != nil {
			return time.Time{}, s.wrap(err, "read database clock")
		}
		return time.UnixMicro(us), nil
	}
	var ms int64
	if err := s.db.queryRow(ctx, `SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)`).Scan(&ms); err != nil {
		return time.Time{}, s.wrap(err, "read database clock")
	}
	return time.UnixMilli(ms), nil
}
