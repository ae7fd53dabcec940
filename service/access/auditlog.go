package access

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
)

// AuditLogOptions configure an AuditLog; zero fields take defaults.
type AuditLogOptions struct {
	// Queue is how many events may wait for the writer (default 4096);
	// beyond that Record blocks until the writer catches up.
	Queue int
	// Batch is the most rows written by one INSERT (default 100).
	Batch int
	// WriteTimeout bounds one batch write (default 10s).
	WriteTimeout time.Duration
	// RetryMax caps the pause between retries of a batch the database
	// could not take (default 5s; the first pause is 100ms, doubling).
	RetryMax time.Duration
	// ShutdownWait bounds how long Close keeps retrying batches while the
	// database is away (default 30s); what is still unwritten then is
	// counted by OnWriteFailure and logged.
	ShutdownWait time.Duration
	// OnWriteRetry is told how many rows a batch held each time its write
	// failed and is retried; may be nil.
	OnWriteRetry func(rows int)
	// OnWriteFailure is told how many rows could not be written at all: a
	// row the database refuses for good, or rows still unwritten when
	// ShutdownWait ran out; may be nil.
	OnWriteFailure func(rows int)
	Logger         *slog.Logger
}

// AuditLog persists audit events through one background writer: events
// are queued on a bounded channel and written in batches. It never drops
// an event: a batch the database cannot take now is retried, with the same
// event ids (the store ignores ids it already holds, so a retry whose first
// insert landed adds nothing), until it is written; meanwhile the queue
// fills and Record waits, which holds back the requests that record.
type AuditLog struct {
	st   store.AuditStore
	opts AuditLogOptions

	mu      sync.RWMutex // held shared while sending, exclusively to close ch
	closed  bool
	ch      chan auditItem
	done    chan struct{}
	closing chan struct{} // closed by Close: retries end ShutdownWait later
}

// auditItem is an event to write, or (flushed != nil) a request to be told
// when everything queued before it is written.
type auditItem struct {
	ev      store.AuditEvent
	flushed chan struct{}
}

// NewAuditLog starts the writer over st; Close stops it.
func NewAuditLog(st store.AuditStore, opts AuditLogOptions) *AuditLog {
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 5 * time.Second
	}
	if opts.ShutdownWait <= 0 {
		opts.ShutdownWait = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &AuditLog{st: st, opts: opts, ch: make(chan auditItem, opts.Queue), done: make(chan struct{}),
		closing: make(chan struct{})}
	go a.run()
	return a
}

// Record queues e, waiting while the queue is full. After Close it writes
// e synchronously instead.
func (a *AuditLog) Record(e store.AuditEvent) {
	a.mu.RLock()
	if !a.closed {
		a.ch <- auditItem{ev: e}
		a.mu.RUnlock()
		return
	}
	a.mu.RUnlock()
	a.write([]store.AuditEvent{e})
}

// Flush returns once every event recorded before the call has been
// written (or its write has failed), or when ctx ends.
func (a *AuditLog) Flush(ctx context.Context) {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return // Close already wrote everything
	}
	done := make(chan struct{})
	a.ch <- auditItem{flushed: done}
	a.mu.RUnlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Close writes every queued event and stops the writer. Safe to call more
// than once.
func (a *AuditLog) Close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.ch)
		close(a.closing)
	}
	a.mu.Unlock()
	<-a.done
}

// run is the writer: it takes what is queued, up to a batch, and writes it
// in one INSERT.
func (a *AuditLog) run() {
	defer close(a.done)
	batch := make([]store.AuditEvent, 0, a.opts.Batch)
	var waiting []chan struct{}
	for it := range a.ch {
		batch, waiting = a.add(batch[:0], waiting[:0], it)
	fill:
		for len(batch) < a.opts.Batch {
			select {
			case it, ok := <-a.ch:
				if !ok {
					break fill
				}
				batch, waiting = a.add(batch, waiting, it)
			default:
				break fill
			}
		}
		a.write(batch)
		for _, w := range waiting {
			close(w)
		}
	}
}

func (a *AuditLog) add(batch []store.AuditEvent, waiting []chan struct{}, it auditItem) ([]store.AuditEvent, []chan struct{}) {
	if it.flushed != nil {
		return batch, append(waiting, it.flushed)
	}
	return append(batch, it.ev), waiting
}

// write appends events until they are written. Errors that mean "not
// now" (the database unreachable, or an answer lost) are retried with a
// growing pause for as long as it takes, and for at most ShutdownWait once
// Close was called. Any other error is tried twice more and then row by
// row, so that one row the database refuses for good costs only itself.
// Failures are logged with counts and error codes, never the rows.
func (a *AuditLog) write(events []store.AuditEvent) {
	if len(events) == 0 {
		return
	}
	for i := range events {
		if events[i].ID == "" {
			// Fixed before the first attempt: every retry inserts the same
			// ids, which the store then ignores if they landed.
			events[i].ID = newAuditID()
		}
	}
	err := a.attempts(events, 3)
	if err == nil {
		return
	}
	if transient(err) || len(events) == 1 {
		a.lost(len(events), err)
		return
	}
	for i := range events {
		if err := a.attempts(events[i:i+1], 3); err != nil {
			a.lost(1, err)
		}
	}
}

// attempts tries one append; a transient failure is retried without a
// limit of tries (ShutdownWait bounds it after Close), others up to tries
// times in all.
func (a *AuditLog) attempts(events []store.AuditEvent, tries int) error {
	pause := 100 * time.Millisecond
	var giveUp <-chan time.Time
	for n := 1; ; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), a.opts.WriteTimeout)
		err := a.st.AppendAudit(ctx, events)
		cancel()
		if err == nil || (!transient(err) && n >= tries) {
			return err
		}
		if n == 1 || n%20 == 0 {
			a.opts.Logger.Warn("audit write failed; retrying", "rows", len(events), "attempt", n, "error", err.Error())
		}
		if a.opts.OnWriteRetry != nil {
			a.opts.OnWriteRetry(len(events))
		}
		if giveUp == nil {
			select {
			case <-a.closing:
				giveUp = time.After(a.opts.ShutdownWait)
			default:
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-giveUp:
			t.Stop()
			return err
		}
		pause = min(2*pause, a.opts.RetryMax)
	}
}

// transient reports whether an append may succeed later unchanged.
func transient(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrOutcomeUnknown) ||
		errors.Is(err, context.DeadlineExceeded)
}

// lost logs and counts rows that could not be written.
func (a *AuditLog) lost(rows int, err error) {
	// Store errors carry a sentinel, the operation and the driver's code,
	// never driver text or values.
	a.opts.Logger.Error("audit write failed", "rows", rows, "error", err.Error())
	if a.opts.OnWriteFailure != nil {
		a.opts.OnWriteFailure(rows)
	}
}

// newAuditID returns a time-ordered id (UUIDv7), or a random one should
// the clock source fail.
func newAuditID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// maxAuditField bounds each text field of an event.
const maxAuditField = 1024

// auditText makes s storable in both databases and bounded: invalid UTF-8
// and NUL (refused by Postgres) are replaced, long values cut.
// AuditText makes s storable in both databases and bounded (see
// auditText).
func AuditText(s string) string { return auditText(s) }

func auditText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	if len(s) > maxAuditField {
		s = strings.ToValidUTF8(s[:maxAuditField], "")
	}
	return s
}
