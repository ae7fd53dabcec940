package upkeep

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// pruneStore records the prunes asked of it and has left tombstones.
type pruneStore struct {
	store.Store
	left   int
	fail   error
	calls  int
	before time.Time
	limit  int
	table  string
}

func (p *pruneStore) PruneOrphanTombstones(_ context.Context, objectID string, before time.Time, limit int) (int, error) {
	p.calls++
	p.table, p.before, p.limit = objectID, before, limit
	if p.fail != nil {
		return 0, p.fail
	}
	n := min(p.left, limit)
	p.left -= n
	return n, nil
}

// TestPruneTombstonesJob: the recurring job prunes every table's
// tombstones older than the retention, at most a batch a round, comes
// back soon while a round was full and hourly once the backlog is gone,
// and reports a store failure in its own words.
func TestPruneTombstonesJob(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	st := &pruneStore{left: tombstonePruneBatch + 10}
	u := New(Deps{Tables: tableaccess.New(tableaccess.Options{Store: st, Clock: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})})
	jobs := u.Jobs()
	if len(jobs) != 1 || jobs[0].Kind != JobPruneTombstones || !jobs[0].Unique {
		t.Fatalf("Jobs() = %+v", jobs)
	}
	h := u.JobHandlers()[JobPruneTombstones]
	if h == nil {
		t.Fatal("no handler for the prune job")
	}
	var snooze *store.JobSnooze
	if err := h(context.Background(), &store.JobInfo{}); !errors.As(err, &snooze) || snooze.After != tombstonePruneSoon {
		t.Fatalf("full round: %v, want a snooze of %s", err, tombstonePruneSoon)
	}
	if st.table != "" || st.limit != tombstonePruneBatch || !st.before.Equal(now.Add(-maintenance.OrphanTombstoneRetention)) {
		t.Errorf("pruned table %q before %v limit %d", st.table, st.before, st.limit)
	}
	if err := h(context.Background(), &store.JobInfo{}); !errors.As(err, &snooze) || snooze.After != tombstonePruneEvery {
		t.Fatalf("last round: %v, want a snooze of %s", err, tombstonePruneEvery)
	}
	if st.left != 0 || st.calls != 2 {
		t.Errorf("left %d after %d rounds", st.left, st.calls)
	}
	st.fail = errors.New("driver text /secret")
	err := h(context.Background(), &store.JobInfo{})
	if err == nil || errors.As(err, &snooze) || err.Error() != JobPruneTombstones+": catalog database error" {
		t.Errorf("failing store: %v", err)
	}
}
