package service

import (
	"context"
	"encoding/json"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/store"
)

// PlanRequest is what a client asks of a scan plan, decoded from the REST
// PlanTableScanRequest. Nil pointers mean "not given".
type PlanRequest struct {
	// SnapshotID is the snapshot to plan (default: the current one).
	SnapshotID *int64
	// StartSnapshotID and EndSnapshotID ask for an incremental append scan:
	// the files added after start (exclusive) up to end (inclusive).
	StartSnapshotID *int64
	EndSnapshotID   *int64
	// Filter is the Iceberg expression JSON; nil or empty means true.
	Filter json.RawMessage
	// Select names the columns the client reads; empty means all.
	Select []string
	// CaseSensitive applies to Filter and Select (REST default: true).
	CaseSensitive bool
	// UseSnapshotSchema binds Filter and Select to the schema of the planned
	// snapshot instead of the table's current schema.
	UseSnapshotSchema bool
	// ColumnFilesOK is set when the client sent X-Iceberg-Column-Files: true.
	ColumnFilesOK bool
}

// DeleteFile is a delete file that one or more planned tasks must apply:
// position deletes, equality deletes or a deletion vector (position deletes
// in Puffin with a content range).
type DeleteFile struct {
	// Content is "position-deletes" or "equality-deletes".
	Content         string
	Location        string
	FileFormat      string // lower case: parquet, avro, orc, puffin
	SpecID          int32
	PartitionValues []any // in the spec's field order
	RecordCount     int64
	FileSizeInBytes int64
	EqualityIDs     []int
	// ReferencedDataFile, ContentOffset and ContentSize describe a deletion
	// vector (and a file-scoped position delete file for the first).
	ReferencedDataFile *string
	ContentOffset      *int64
	ContentSize        *int64
}

// PlanResult is a completed plan: the tasks and the delete files they
// reference by index (ScanTask.DeleteRefs).
type PlanResult struct {
	Tasks       []ScanTask
	DeleteFiles []DeleteFile
}

// planAvro plans a scan of a format v1–v3 table from its Avro manifests.
// md is the table's current metadata; the caller has authorized the read.
//
// TODO(plan-v3): not implemented yet; replaced by the v1–v3 planner.
func (s *Service) planAvro(ctx context.Context, w *store.Warehouse, md table.Metadata, req PlanRequest) (PlanResult, error) {
	return PlanResult{}, newErr(KindBadRequest, "Server-side scan planning is served for format version 4 tables only")
}
