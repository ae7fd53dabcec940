package service

import (
	"context"

	"github.com/lakehold/catalog/internal/fault"
)

// Ping checks that this replica can serve commits (readiness): it returns
// a fault.Unavailable error when the catalog database does not answer (the
// cause stays in the error chain for logs, never in the message) or when
// this process's clock is too far off the database's (clockGuard).
func (s *Service) Ping(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return fault.Wrap(fault.Unavailable, err, "Catalog database unavailable")
	}
	return s.ta.ClockGuard()
}

// poolStatser is implemented by stores with a connection pool.
type poolStatser interface {
	PoolStats() (acquired, idle, total int32, ok bool)
}

// PoolStats reports the database connections in use, idle and open; ok is
// false for a store without a connection pool (SQLite).
func (s *Service) PoolStats() (acquired, idle, total int32, ok bool) {
	if ps, isPool := s.store.(poolStatser); isPool {
		return ps.PoolStats()
	}
	return 0, 0, 0, false
}
