package service

import (
	"time"
)

// DefaultMaxClockOffset is Options.MaxClockOffset's default: far above
// what NTP leaves between machines, far below the minute of disorder that
// Iceberg readers tolerate in a table's logs.
const DefaultMaxClockOffset = 5 * time.Second

// ClockOffset reports how far the catalog database's clock was ahead of
// this process's at the last measurement; ok is false until one succeeded
// (or without a store).
func (s *Service) ClockOffset() (offset time.Duration, ok bool) { return s.ta.ClockOffset() }

// Now is the catalog's clock: the database's, as this replica estimates
// it (Options.Clock). Command-line tools date cut-offs with it.
func (s *Service) Now() time.Time { return s.opts.Clock() }
