package tablecommit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/store"
)

// JobDeleteMetadataFiles is the kind of the job that deletes the metadata
// files a commit dropped from the metadata log, for a table with
// write.metadata.delete-after-commit.enabled (Iceberg's property; the log
// keeps write.metadata.previous-versions-max entries, as Java's does).
// It is enqueued in the commit's transaction, so the files go if and only
// if the commit that dropped them landed, and a worker that dies first
// leaves the job for the next.
const JobDeleteMetadataFiles = "delete-metadata-files"

type metadataFilesArgs struct {
	Warehouse     string   `json:"warehouse"`
	TableLocation string   `json:"table-location"`
	Files         []string `json:"files"`
}

// droppedMetadata lists the metadata files a commit from base to meta
// (written at metaLoc) drops from the table's metadata log: in the old log
// or the old current file, in neither the new log nor the new current file.
func droppedMetadata(base, meta table.Metadata, metaLoc string) []string {
	keep := map[string]bool{metaLoc: true}
	for e := range meta.PreviousFiles() {
		keep[e.MetadataFile] = true
	}
	var out []string
	for e := range base.PreviousFiles() {
		if !keep[e.MetadataFile] {
			out = append(out, e.MetadataFile)
		}
	}
	return out
}

// metadataCleanupJob is the delete-metadata-files job of a commit from
// base to meta (written at metaLoc), when the table asks for it and the
// commit drops any file.
func metadataCleanupJob(w *store.Warehouse, id ident.Ident, base, meta table.Metadata, metaLoc string) (store.Job, bool) {
	if v, _ := strconv.ParseBool(meta.Properties()["write.metadata.delete-after-commit.enabled"]); !v {
		return store.Job{}, false
	}
	files := droppedMetadata(base, meta, metaLoc)
	if len(files) == 0 {
		return store.Job{}, false
	}
	raw, _ := json.Marshal(metadataFilesArgs{Warehouse: w.Name, TableLocation: meta.Location(), Files: files}) // cannot fail
	return store.Job{Kind: JobDeleteMetadataFiles, Args: raw, Warehouse: w.Name, Table: id.String(),
		TableUUID: meta.TableUUID().String()}, true
}

// CommitJobs are the jobs a table commit from base to meta (written at
// metaLoc) enqueues with its swap: the table's policies and the clean-up
// of dropped metadata files, each when the table asks for it.
func (tc *Committer) CommitJobs(w *store.Warehouse, id ident.Ident, base, meta table.Metadata, metaLoc string) []store.Job {
	jobs := upkeep.PolicyJobs(tc.d.Tables.Now(), w, id, meta)
	if job, ok := metadataCleanupJob(w, id, base, meta, metaLoc); ok {
		jobs = append(jobs, job)
	}
	return jobs
}

// stagedJobs are CommitJobs of a staged change.
func (tc *Committer) stagedJobs(w *store.Warehouse, id ident.Ident, st *staged) []store.Job {
	return tc.CommitJobs(w, id, st.base, st.meta, st.metaLoc)
}

// RunDeleteMetadataFiles is the handler of JobDeleteMetadataFiles: it
// deletes the job's files that lie inside the table's prefixes (one
// outside is logged and left); a file already gone counts as deleted. It
// returns an error, for the attempt to be retried, when the arguments are
// malformed, the warehouse cannot be read or a delete failed; nil when the
// warehouse is gone.
func (tc *Committer) RunDeleteMetadataFiles(ctx context.Context, j *store.JobInfo) error {
	var a metadataFilesArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.TableLocation == "" {
		return errors.New("delete-metadata-files: malformed job arguments")
	}
	w, err := tc.d.Tables.Warehouse(ctx, a.Warehouse)
	if err != nil {
		return upkeep.SkipGone(JobDeleteMetadataFiles, err)
	}
	allowed := locations.TablePrefixes(w, a.TableLocation)
	failed := 0
	for _, f := range a.Files {
		if !allowed.Contains(f) {
			tc.d.Tables.Logger().WarnContext(ctx, "left a file outside the table", "file", locations.FileName(w, a.TableLocation, f))
			continue
		}
		io, err := tc.d.Tables.FileIO(ctx, w, f)
		if err == nil {
			err = io.Delete(ctx, f)
		}
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			failed++
			tc.d.Tables.Logger().WarnContext(ctx, "could not delete a dropped metadata file", "file", locations.FileName(w, a.TableLocation, f), "error", storage.PathFree(err))
		}
	}
	if failed > 0 {
		return fmt.Errorf("delete-metadata-files: %d of %d files could not be deleted (see the catalog log)", failed, len(a.Files))
	}
	return nil
}
