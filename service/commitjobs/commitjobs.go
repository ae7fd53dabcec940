// Package commitjobs builds the jobs a table commit enqueues with its
// swap, in the commit's own transaction: one per scheduled maintenance
// policy the table has on, and the deletion of the metadata files the
// commit drops from the table's metadata log. It only builds them (values
// in, jobs out), so that every room that commits a table (tablecommit,
// v4commits) enqueues the same jobs without calling a room above it; the
// jobs are run by package upkeep, which reads their arguments back with
// the types declared here.
package commitjobs

import (
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// For are the jobs a commit of table id in w from base to meta (written
// at metaLoc), landing at now, enqueues with its swap: the table's
// policies and the clean-up of dropped metadata files, each when the
// table asks for it.
func For(now time.Time, w *store.Warehouse, id ident.Ident, base, meta table.Metadata, metaLoc string) []store.Job {
	jobs := policyJobs(now, w, id, meta)
	if job, ok := metadataCleanupJob(w, id, base, meta, metaLoc); ok {
		jobs = append(jobs, job)
	}
	return jobs
}
