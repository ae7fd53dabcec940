package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// The JSON of planned files follows the REST spec's ContentFile, DataFile
// and DeleteFile schemas; Java's ContentFileParser reads it, so field names
// and value encodings are exactly the spec's.

// columnFileJSON is our column-file extension on a planned data file.
type columnFileJSON struct {
	Location        string `json:"location"`
	FileFormat      string `json:"file-format"`
	FieldIDs        []int  `json:"field-ids"`
	FileSizeInBytes int64  `json:"file-size-in-bytes"`
	// SequenceNumber is set on a column-change task only: the data
	// sequence number of the commit that added the column file.
	SequenceNumber *int64 `json:"sequence-number,omitempty"`
}

// countMap is the REST CountMap: parallel keys and values.
type countMap struct {
	Keys   []int   `json:"keys"`
	Values []int64 `json:"values"`
}

// contentFileJSON holds the fields the spec's DataFile and DeleteFile
// share (ContentFile).
type contentFileJSON struct {
	Content         string            `json:"content"`
	FilePath        string            `json:"file-path"`
	FileFormat      string            `json:"file-format"`
	SpecID          int32             `json:"spec-id"`
	Partition       []json.RawMessage `json:"partition"`
	FileSizeInBytes int64             `json:"file-size-in-bytes"`
	RecordCount     int64             `json:"record-count"`
}

// contentFile fills the shared fields; the format is written lower-case,
// as Java's FileFormat parser expects.
func contentFile(content, location, format string, spec int32, values []any, types []iceberg.Type, size, records int64) contentFileJSON {
	return contentFileJSON{Content: content, FilePath: location, FileFormat: strings.ToLower(format), SpecID: spec,
		Partition: partitionJSON(values, types), FileSizeInBytes: size, RecordCount: records}
}

type dataFileJSON struct {
	contentFileJSON
	SplitOffsets    []int64          `json:"split-offsets,omitempty"`
	SortOrderID     *int32           `json:"sort-order-id,omitempty"`
	FirstRowID      *int64           `json:"first-row-id,omitempty"`
	ValueCounts     *countMap        `json:"value-counts,omitempty"`
	NullValueCounts *countMap        `json:"null-value-counts,omitempty"`
	NaNValueCounts  *countMap        `json:"nan-value-counts,omitempty"`
	ColumnFiles     []columnFileJSON `json:"column-files,omitempty"`
	// Row-lineage and change-detection extensions of v4 plans
	// (docs/column-files.md).
	DataSequenceNumber         *int64 `json:"data-sequence-number,omitempty"`
	LatestColumnFileSnapshotID *int64 `json:"latest-column-file-snapshot-id,omitempty"`
	ColumnFilesChangedSince    *int64 `json:"column-files-changed-since,omitempty"`
}

type fileScanTaskJSON struct {
	DataFile             dataFileJSON    `json:"data-file"`
	DeleteFileReferences []int           `json:"delete-file-references,omitempty"`
	ResidualFilter       json.RawMessage `json:"residual-filter"`
}

type deleteFileJSON struct {
	contentFileJSON
	EqualityIDs        []int   `json:"equality-ids,omitempty"`
	ReferencedDataFile *string `json:"referenced-data-file,omitempty"`
	ContentOffset      *int64  `json:"content-offset,omitempty"`
	ContentSizeInBytes *int64  `json:"content-size-in-bytes,omitempty"`
}

// encodePlan turns a plan into the JSON arrays of a REST ScanTasks object.
func encodePlan(res service.PlanResult) (tasks, deletes []openapi.RawJSON, err error) {
	tasks = make([]openapi.RawJSON, 0, len(res.Tasks))
	// Java's REST scan reads a residual from every task (a missing one is a
	// NullPointerException): the request's filter, or true.
	resid := res.Residual
	if len(resid) == 0 {
		resid = json.RawMessage("true")
	}
	for _, t := range res.Tasks {
		b, err := json.Marshal(fileScanTaskJSON{DataFile: dataFile(t), DeleteFileReferences: t.DeleteRefs, ResidualFilter: resid})
		if err != nil {
			return nil, nil, err
		}
		tasks = append(tasks, b)
	}
	deletes = make([]openapi.RawJSON, 0, len(res.DeleteFiles))
	for _, d := range res.DeleteFiles {
		b, err := json.Marshal(deleteFileJSON{
			contentFileJSON: contentFile(d.Content, d.Location, d.FileFormat, d.SpecID, d.PartitionValues, d.PartitionTypes, d.FileSizeInBytes, d.RecordCount),
			EqualityIDs:     d.EqualityIDs, ReferencedDataFile: d.ReferencedDataFile,
			ContentOffset: d.ContentOffset, ContentSizeInBytes: d.ContentSize})
		if err != nil {
			return nil, nil, err
		}
		deletes = append(deletes, b)
	}
	return tasks, deletes, nil
}

func dataFile(t service.ScanTask) dataFileJSON {
	df := dataFileJSON{
		contentFileJSON: contentFile("data", t.Location, t.FileFormat, t.SpecID, t.PartitionValues, t.PartitionTypes, t.FileSizeInBytes, t.RecordCount),
		SplitOffsets:    t.SplitOffsets, SortOrderID: t.SortOrderID, FirstRowID: t.FirstRowID,
		ValueCounts: counts(t.ValueCounts), NullValueCounts: counts(t.NullValueCounts), NaNValueCounts: counts(t.NaNValueCounts)}
	for i, cf := range t.ColumnFiles {
		df.ColumnFiles = append(df.ColumnFiles, columnFileJSON{Location: cf.Location, FileFormat: strings.ToLower(cf.FileFormat),
			FieldIDs: cf.FieldIDs, FileSizeInBytes: cf.FileSizeInBytes})
		if i < len(t.ColumnFileSequenceNumbers) {
			df.ColumnFiles[i].SequenceNumber = &t.ColumnFileSequenceNumbers[i]
		}
	}
	if t.DataSequenceNumber > 0 {
		df.DataSequenceNumber = &t.DataSequenceNumber
	}
	df.LatestColumnFileSnapshotID, df.ColumnFilesChangedSince = t.LatestColumnFileSnapshotID, t.ColumnFilesChangedSince
	return df
}

func counts(m map[int]int64) *countMap {
	if len(m) == 0 {
		return nil
	}
	c := &countMap{}
	for k := range m {
		c.Keys = append(c.Keys, k)
	}
	sort.Ints(c.Keys)
	for _, k := range c.Keys {
		c.Values = append(c.Values, m[k])
	}
	return c
}

// partitionJSON encodes a partition tuple value by value.
func partitionJSON(vals []any, types []iceberg.Type) []json.RawMessage {
	out := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		var typ iceberg.Type
		if i < len(types) {
			typ = types[i]
		}
		out[i] = singleValue(v, typ)
	}
	return out
}

// singleValue is the JSON of one partition value (see
// service.PartitionValueJSON).
func singleValue(v any, typ iceberg.Type) json.RawMessage {
	b, err := json.Marshal(service.PartitionValueJSON(v, typ))
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return b
}
