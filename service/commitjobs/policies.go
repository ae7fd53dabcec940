package commitjobs

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// Tables that maintain themselves. A table whose policy is on (a table
// property, or for every table of it a warehouse property; the table's
// value wins) gets the policy's job with every commit that lands, in the
// commit's transaction, Unique: at most one waiting or running per table
// and kind, so a table is never maintained twice at once. The job runs the
// policy's delay later and, while there is more to do later, sleeps for
// the delay and runs again (the same job), so a table without commits is
// kept too. A table that is gone, renamed away, replaced by another of the
// same name or whose policy was turned off ends the job at its next run.
const (
	// JobExpireSnapshots expires snapshots as `catalog maintain` does,
	// by the table's history.expire.* properties.
	JobExpireSnapshots = "expire-snapshots"
	// PropExpireEnabled turns scheduled expiry on ("true").
	PropExpireEnabled = "lakehold.expire-snapshots.enabled"
	// PropExpireDelay is the delay in milliseconds (default one hour).
	PropExpireDelay = "lakehold.expire-snapshots.delay-ms"

	// JobRemoveOrphanFiles removes orphan files older than
	// PropOrphanAge (default 3 days), as RemoveOrphanFiles does.
	JobRemoveOrphanFiles = "remove-orphan-files"
	// PropOrphanEnabled turns scheduled orphan removal on ("true").
	PropOrphanEnabled = "lakehold.remove-orphan-files.enabled"
	// PropOrphanDelay is the delay in milliseconds (default one day).
	PropOrphanDelay = "lakehold.remove-orphan-files.delay-ms"
	// PropOrphanAge is the safety window in milliseconds (at least one
	// hour, default 3 days).
	PropOrphanAge = "lakehold.remove-orphan-files.older-than-ms"

	// JobCompactColumnFiles compacts a v4 table as `catalog compact` does:
	// the bases past the write.column-files.compact.* thresholds.
	JobCompactColumnFiles = "compact-column-files"
	// PropCompactEnabled turns scheduled compaction on ("true").
	PropCompactEnabled = "lakehold.compact-column-files.enabled"
	// PropCompactDelay is the delay in milliseconds (default ten minutes).
	PropCompactDelay = "lakehold.compact-column-files.delay-ms"
)

// Policy is one kind of self-maintenance: its job kind, the property that
// turns it on and the one that sets its delay.
type Policy struct {
	Kind, Enabled, Delay string
	DefaultDelay         time.Duration
}

// Policies are the table policies, in the order a commit enqueues their
// jobs.
func Policies() []Policy {
	return []Policy{
		{Kind: JobExpireSnapshots, Enabled: PropExpireEnabled, Delay: PropExpireDelay, DefaultDelay: time.Hour},
		{Kind: JobRemoveOrphanFiles, Enabled: PropOrphanEnabled, Delay: PropOrphanDelay, DefaultDelay: 24 * time.Hour},
		{Kind: JobCompactColumnFiles, Enabled: PropCompactEnabled, Delay: PropCompactDelay, DefaultDelay: 10 * time.Minute},
	}
}

// setting reads a maintenance property: the table's (props), else its
// warehouse's.
func setting(w *store.Warehouse, props map[string]string, key string) string {
	if v, ok := props[key]; ok {
		return v
	}
	return w.Properties[key]
}

// On reports whether p is on for a table of w with properties props.
func (p Policy) On(w *store.Warehouse, props map[string]string) bool {
	on, _ := strconv.ParseBool(setting(w, props, p.Enabled))
	return on
}

// DelayOf is p's delay for a table of w with properties props.
func (p Policy) DelayOf(w *store.Warehouse, props map[string]string) time.Duration {
	return Millis(w, props, p.Delay, p.DefaultDelay)
}

// Millis reads the maintenance property key (the table's, else its
// warehouse's) as milliseconds: def when it is absent, not a number or
// negative.
func Millis(w *store.Warehouse, props map[string]string, key string, def time.Duration) time.Duration {
	if ms, err := strconv.ParseInt(setting(w, props, key), 10, 64); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

// PolicyArgs are a policy job's arguments: the table it keeps, by name
// and by UUID (a table replaced under the same name is not kept).
type PolicyArgs struct {
	Warehouse string   `json:"warehouse"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	TableUUID string   `json:"table-uuid"`
}

// policyJobs are the jobs a commit that lands on table id at now, whose
// new metadata is meta, enqueues: one per policy that is on.
func policyJobs(now time.Time, w *store.Warehouse, id ident.Ident, meta table.Metadata) []store.Job {
	var jobs []store.Job
	props := meta.Properties()
	for _, p := range Policies() {
		if !p.On(w, props) {
			continue
		}
		uuid := meta.TableUUID().String()
		raw, _ := json.Marshal(PolicyArgs{Warehouse: w.Name, Namespace: id.Namespace, Name: id.Name, TableUUID: uuid}) // cannot fail
		jobs = append(jobs, store.Job{Kind: p.Kind, Args: raw, Warehouse: w.Name, Table: id.String(), TableUUID: uuid,
			Unique: true, RunAt: now.Add(p.DelayOf(w, props))})
	}
	return jobs
}
