package service

import (
	"time"

	"github.com/lakehold/catalog/internal/fault"
)

// DefaultMaxClockOffset is Options.MaxClockOffset's default: far above
// what NTP leaves between machines, far below the minute of disorder that
// Iceberg readers tolerate in a table's logs.
const DefaultMaxClockOffset = 5 * time.Second

// msgClockOffset is the 503 of a replica whose clock is off.
const msgClockOffset = "This catalog replica's clock is %s off the catalog database's; nothing was committed; retry"

// ClockOffset reports how far the catalog database's clock was ahead of
// this process's at the last measurement; ok is false until one succeeded
// (or without a store).
func (s *Service) ClockOffset() (offset time.Duration, ok bool) {
	if s.store == nil {
		return 0, false
	}
	return s.store.ClockOffset()
}

// clockGuard returns a fault.Unavailable error (503: nothing committed,
// retry, on another replica behind a load balancer) when this process's
// clock is more than Options.MaxClockOffset off the database's, and nil
// otherwise, including before the offset has been measured. It runs before
// a commit builds any metadata, since the builder stamps times with the
// process's clock.
func (s *Service) clockGuard() error {
	off, ok := s.ClockOffset()
	if !ok || off.Abs() <= s.opts.MaxClockOffset {
		return nil
	}
	return fault.New(fault.Unavailable, msgClockOffset, off.Abs().Round(100*time.Millisecond))
}

// Now is the catalog's clock: the database's, as this replica estimates
// it (Options.Clock). Command-line tools date cut-offs with it.
func (s *Service) Now() time.Time { return s.now() }
