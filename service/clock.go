package service

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/apache/iceberg-go/table"
)

// The catalog clock. Replicas share one database but not one clock, and a
// replica whose clock is off must not reorder a table's history or expire
// snapshots early. Every time the service writes into table metadata or
// decides by comes from s.clock.now(): last-updated-ms and the
// snapshot-log entries of a commit (buildDated), the timestamp of a
// snapshot the catalog creates itself (v4 file commits), the "dated in the
// future" bound on committed snapshots (checkNewMetadata) and the cut-off
// of snapshot expiry (Maintain). now() is the replica's own clock
// (Options.Now), kept honest against the database's (store.Store.Clock):
//
//   - a commit measures the offset between the two when the last
//     measurement is older than clockCheckEvery (one extra query, on one
//     commit in that period); a maintenance run measures before it decides
//     anything, and refuses to run (503) when it cannot;
//   - while the replica agrees with the database within MaxClockSkew its
//     own clock is used unchanged; beyond that its clock plus the measured
//     offset, that is the database's time, and a warning is logged;
//   - a measurement that fails, or whose round trip took longer than
//     MaxClockSkew (its error is half the round trip), changes nothing.
//
// Whatever the clock says, a commit never dates the table at or before its
// previous update (buildDated), so history stays in commit order even when
// no measurement could be made.

// clockCheckEvery is how often commits re-measure the database clock.
const clockCheckEvery = 30 * time.Second

// errClockUnsure is a measurement whose round trip was too slow to trust.
var errClockUnsure = errors.New("database clock read took too long to measure the clock offset")

// clock is one replica's corrected clock.
type clock struct {
	local func() time.Time
	db    func(context.Context) (time.Time, error)
	skew  time.Duration
	warn  func(msg string, args ...any)

	mu       sync.Mutex
	offset   time.Duration // added to local(); 0 while within skew
	measured time.Time     // local time of the last measurement started (zero: never)
	busy     bool
}

// now is the catalog's current time.
func (c *clock) now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.local().Add(off)
}

// sync measures the offset to the database clock when the last measurement
// is older than clockCheckEvery (force: always, and then its error is
// returned; otherwise failures are left to the next check).
func (c *clock) sync(ctx context.Context, force bool) error {
	c.mu.Lock()
	at := c.local()
	due := c.measured.IsZero() || at.Sub(c.measured) >= clockCheckEvery || at.Before(c.measured)
	if !force && (!due || c.busy) {
		c.mu.Unlock()
		return nil
	}
	c.busy, c.measured = true, at
	c.mu.Unlock()
	before := c.local()
	dbNow, err := c.db(ctx)
	rtt := c.local().Sub(before)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = false
	if err == nil && (rtt < 0 || rtt > c.skew) {
		err = errClockUnsure
	}
	if err != nil {
		return err
	}
	off := dbNow.Sub(before.Add(rtt / 2))
	if off.Abs() <= c.skew {
		off = 0
	}
	if off != 0 && (c.offset == 0 || (off-c.offset).Abs() > c.skew) {
		c.warn("replica clock differs from the catalog database clock by more than --max-clock-skew; using the database clock",
			"offset", off.Round(time.Millisecond).String(), "max_clock_skew", c.skew.String())
	} else if off == 0 && c.offset != 0 {
		c.warn("replica clock agrees with the catalog database clock again", "max_clock_skew", c.skew.String())
	}
	c.offset = off
	return nil
}

// buildDated builds b, the builder of a commit on prev (nil when the
// commit creates the table), dated by the catalog clock at now.
// iceberg-go's builder reads time.Now itself when no added snapshot dates
// the commit, copies an added snapshot's timestamp-ms (the client's clock)
// into last-updated-ms even when that is earlier than the table's last
// update, and Build refuses a result whose logs then run backwards by more
// than a minute. So before Build, last-updated-ms is set by the rule
//
//	last-updated-ms = max(stamp, prev last-updated-ms + 1)
//
// where stamp is the timestamp-ms of a snapshot this commit added when the
// builder dated the commit by it (Iceberg's rule), else now; under it
// last-updated-ms strictly increases in commit order. The snapshot-log
// entries the commit appended carry the same value, as the spec has them
// carry last-updated-ms, so that log stays in commit order too, and the
// metadata-log entry of the replaced file is prev's last-updated-ms. A
// snapshot's own timestamp-ms is the client's and is not changed. When the
// builder does not have the shape expected it is built as it is.
func buildDated(b *table.MetadataBuilder, prev table.Metadata, now time.Time) (table.Metadata, error) {
	dateBuilder(b, prev, now)
	return b.Build()
}

var snapshotLogType = reflect.TypeOf([]table.SnapshotLogEntry(nil))

func dateBuilder(b *table.MetadataBuilder, prev table.Metadata, now time.Time) {
	if b == nil {
		return
	}
	e := reflect.ValueOf(b).Elem()
	luF, logF, upF := e.FieldByName("lastUpdatedMS"), e.FieldByName("snapshotLog"), e.FieldByName("updates")
	if !luF.IsValid() || luF.Kind() != reflect.Int64 || !logF.IsValid() || logF.Type() != snapshotLogType ||
		!upF.IsValid() || upF.Type() != reflect.TypeOf([]table.Update(nil)) {
		return
	}
	stamp := now.UnixMilli()
	if set := b.LastUpdatedMS(); set != 0 && addedSnapshotAt(writable(upF).Interface().([]table.Update), set) {
		stamp = set
	}
	had := 0
	if prev != nil {
		stamp = max(stamp, prev.LastUpdatedMillis()+1)
		had = snapshotLogLen(prev)
	}
	writable(luF).SetInt(stamp)
	// The builder's log is prev's (a copy) plus what the commit appended.
	log := writable(logF).Interface().([]table.SnapshotLogEntry)
	if had >= len(log) {
		return
	}
	out := slices.Clone(log)
	for i := had; i < len(out); i++ {
		out[i].TimestampMs = stamp
	}
	writable(logF).Set(reflect.ValueOf(out))
}

// snapshotLogLen is the length of meta's snapshot log, read without
// walking it when meta has the expected shape.
func snapshotLogLen(meta table.Metadata) int {
	if v := reflect.ValueOf(meta); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("SnapshotLog"); f.IsValid() && f.Type() == snapshotLogType {
			return f.Len()
		}
	}
	n := 0
	for range meta.SnapshotLogs() {
		n++
	}
	return n
}

// addedSnapshotAt reports whether an add-snapshot update among ups adds a
// snapshot dated ts.
func addedSnapshotAt(ups []table.Update, ts int64) bool {
	for _, u := range ups {
		if u == nil || u.Action() != table.UpdateAddSnapshot {
			continue
		}
		v := reflect.ValueOf(u)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			continue
		}
		f := v.Elem().FieldByName("Snapshot")
		if !f.IsValid() || f.Type() != reflect.TypeOf((*table.Snapshot)(nil)) || f.IsNil() {
			continue
		}
		if f.Interface().(*table.Snapshot).TimestampMs == ts {
			return true
		}
	}
	return false
}

// dateCreated sets last-updated-ms of meta, a table's first metadata just
// built by table.NewMetadata (which reads time.Now), to now.
func dateCreated(meta table.Metadata, now time.Time) {
	v := reflect.ValueOf(meta)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	if f := v.Elem().FieldByName("LastUpdatedMS"); f.IsValid() && f.Kind() == reflect.Int64 && f.CanSet() {
		f.SetInt(now.UnixMilli())
	}
}
