package sqlstore

import (
	"context"
	"time"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// A commit to a table with a maintenance policy enqueues the table's
// Unique policy job, and River's unique insert is most of what the policy
// adds to a commit (docs/events.md, "Cost"). A job River holds as
// scheduled for time T cannot run before T: River makes it available only
// then, a snooze moves T later, and nothing in the catalog cancels or
// deletes a waiting job. So once an insert learnt that the job waits until
// T, a change before T (less jobHintMargin, for clock offsets between
// replicas and the database) needs no insert: the waiting job runs after
// the change and sees it. The hint is written in the inserting
// transaction, so it exists if and only if that insert landed.

// jobHintMargin is how long before a job's time a change still inserts.
const jobHintMargin = time.Minute

func jobHintKey(j store.Job) string { return j.Kind + " " + string(j.Args) } // kinds hold no space

// jobWaits reports whether a hint says j's Unique job waits past
// now+jobHintMargin.
func jobWaits(ctx context.Context, q sqldb.Querier, j store.Job, now time.Time) (bool, error) {
	var until int64 // 0 without a hint: one row either way
	err := q.QueryRow(ctx, `SELECT COALESCE(MAX(scheduled_until), 0) FROM job_hints WHERE key = $1`, jobHintKey(j)).Scan(&until)
	if err != nil {
		return false, err
	}
	return until > now.Add(jobHintMargin).UnixMilli(), nil
}

// recordJobHint remembers when the Unique job River now holds for j (the
// one inserted, or the one already there) is scheduled.
func recordJobHint(ctx context.Context, q sqldb.Querier, j store.Job, scheduledAt time.Time) error {
	_, err := q.Exec(ctx, `INSERT INTO job_hints (key, scheduled_until) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET scheduled_until = excluded.scheduled_until`, jobHintKey(j), scheduledAt.UnixMilli())
	return err
}
