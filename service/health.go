package service

import (
	"context"

	"github.com/lakehold/catalog/internal/fault"
)

// Ping checks that the catalog database answers. It returns a
// fault.Unavailable error when it does not (the cause stays in the error
// chain for logs, never in the message).
func (s *Service) Ping(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return fault.Wrap(fault.Unavailable, err, "Catalog database unavailable")
	}
	return nil
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
