package planning

import (
	"encoding/json"

	"github.com/apache/iceberg-go"
)

// Request is what a client asks of a scan plan, decoded from the REST
// PlanTableScanRequest. Nil pointers mean "not given".
type Request struct {
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
	// StatsFields names the fields whose column counts the tasks of a v4
	// plan carry: nil means every field (what clients that never send
	// stats-fields get), empty means none. Fewer stats are fewer manifest
	// columns to read.
	StatsFields []string
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
	// PartitionTypes are the partition values' types (nil when unknown).
	PartitionTypes  []iceberg.Type
	RecordCount     int64
	FileSizeInBytes int64
	EqualityIDs     []int
	// ReferencedDataFile, ContentOffset and ContentSize describe a deletion
	// vector (and a file-scoped position delete file for the first).
	ReferencedDataFile *string
	ContentOffset      *int64
	ContentSize        *int64
}

// Result is a completed plan: the tasks and the delete files they
// reference by index (ScanTask.DeleteRefs).
type Result struct {
	Tasks       []ScanTask
	DeleteFiles []DeleteFile
	// PlanTasks are opaque tokens for the rest of a large plan, each
	// fetched with FetchScanTasks.
	PlanTasks []string
	// Residual is the filter every task's rows must still be checked
	// against (the request's filter; nil means true). Java's REST scan
	// reads it from every task.
	Residual json.RawMessage
}
