package server

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/store"
)

// The hooks below count what the command line's other parts do (jobs,
// commits, audit writes) in the server's registry; package pipeline
// counts the HTTP requests.

// JobObserver returns a hook to call after each job attempt this replica
// runs, counting attempts by kind and outcome (ok, snoozed: to run again
// later, error).
func JobObserver(reg *prometheus.Registry) func(kind string, err error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalog_job_attempts_total", Help: "Job attempts run by this replica, by kind and outcome (ok, snoozed, error).",
	}, []string{"kind", "outcome"})
	reg.MustRegister(c)
	return func(kind string, err error) {
		var snooze *store.JobSnooze
		outcome := "ok"
		switch {
		case errors.As(err, &snooze):
			outcome = "snoozed"
		case err != nil:
			outcome = "error"
		}
		c.WithLabelValues(kind, outcome).Inc()
	}
}

// CommitObserver returns the hook service.Options.OnCommit should call.
func CommitObserver(reg *prometheus.Registry) func(string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalog_commit_outcomes_total", Help: "Commit attempts by final outcome.",
	}, []string{"outcome"})
	reg.MustRegister(c)
	return func(o string) { c.WithLabelValues(o).Inc() }
}

// AuditWriteFailures returns the hook service.AuditLogOptions.OnWriteFailure
// should call: it counts audit rows that could not be written.
func AuditWriteFailures(reg *prometheus.Registry) func(rows int) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "catalog_audit_write_failures_total", Help: "Audit events that could not be written to the database.",
	})
	reg.MustRegister(c)
	return func(n int) { c.Add(float64(n)) }
}

// AuditWriteRetries returns the hook service.AuditLogOptions.OnWriteRetry
// should call: it counts audit rows whose write failed and is retried.
func AuditWriteRetries(reg *prometheus.Registry) func(rows int) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "catalog_audit_write_retries_total", Help: "Audit rows whose write failed and was retried (the database was away or its answer lost).",
	})
	reg.MustRegister(c)
	return func(n int) { c.Add(float64(n)) }
}
