package commitjobs

import (
	"encoding/json"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/ident"
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

// MetadataFilesArgs are a delete-metadata-files job's arguments: the
// table's location (its files are deleted only inside it) and the files.
type MetadataFilesArgs struct {
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
	raw, _ := json.Marshal(MetadataFilesArgs{Warehouse: w.Name, TableLocation: meta.Location(), Files: files}) // cannot fail
	return store.Job{Kind: JobDeleteMetadataFiles, Args: raw, Warehouse: w.Name, Table: id.String(),
		TableUUID: meta.TableUUID().String()}, true
}
