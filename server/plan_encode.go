package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/openapi/scantasks"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/planning"
)

// A plan answer's tasks and delete files are the generated types of
// openapi/scantasks/scantasks.json: the REST spec's FileScanTask, DataFile
// and DeleteFile fields (Java's ContentFileParser reads them, so names and
// value encodings are exactly the spec's) plus our v4 extensions.

// encodePlan turns a plan into the tasks and delete files of a REST
// ScanTasks object.
func encodePlan(res service.PlanResult) (tasks []scantasks.FileScanTask, deletes []scantasks.PlanDeleteFile) {
	// Java's REST scan reads a residual from every task (a missing one is a
	// NullPointerException): the request's filter, or true.
	resid := res.Residual
	if len(resid) == 0 {
		resid = json.RawMessage("true")
	}
	tasks = make([]scantasks.FileScanTask, 0, len(res.Tasks))
	for _, t := range res.Tasks {
		tasks = append(tasks, scantasks.FileScanTask{DataFile: dataFile(t), DeleteFileReferences: t.DeleteRefs, ResidualFilter: resid})
	}
	deletes = make([]scantasks.PlanDeleteFile, 0, len(res.DeleteFiles))
	for _, d := range res.DeleteFiles {
		deletes = append(deletes, deleteFile(d))
	}
	return tasks, deletes
}

// dataFile is a planned data file with its v4 extensions; formats are
// written lower-case, as Java's FileFormat parser expects.
func dataFile(t service.ScanTask) scantasks.PlanDataFile {
	df := scantasks.PlanDataFile{Content: "data", FilePath: t.Location, FileFormat: strings.ToLower(t.FileFormat),
		SpecId: t.SpecID, Partition: partitionJSON(t.PartitionValues, t.PartitionTypes),
		FileSizeInBytes: t.FileSizeInBytes, RecordCount: t.RecordCount,
		SplitOffsets: t.SplitOffsets, SortOrderId: t.SortOrderID, FirstRowId: t.FirstRowID,
		ValueCounts: counts(t.ValueCounts), NullValueCounts: counts(t.NullValueCounts), NanValueCounts: counts(t.NaNValueCounts),
		LatestColumnFileSnapshotId: t.LatestColumnFileSnapshotID, ColumnFilesChangedSince: t.ColumnFilesChangedSince}
	for i, cf := range t.ColumnFiles {
		c := scantasks.PlanColumnFile{Location: cf.Location, FileFormat: strings.ToLower(cf.FileFormat),
			FieldIds: cf.FieldIDs, FileSizeInBytes: cf.FileSizeInBytes}
		if i < len(t.ColumnFileSequenceNumbers) {
			c.SequenceNumber = &t.ColumnFileSequenceNumbers[i]
		}
		df.ColumnFiles = append(df.ColumnFiles, c)
	}
	if t.DataSequenceNumber > 0 {
		df.DataSequenceNumber = &t.DataSequenceNumber
	}
	return df
}

// deleteFile is a planned delete file: a deletion vector (Puffin, with
// its blob's offset and size), a position or an equality delete file.
func deleteFile(d service.DeleteFile) scantasks.PlanDeleteFile {
	return scantasks.PlanDeleteFile{Content: d.Content, FilePath: d.Location, FileFormat: strings.ToLower(d.FileFormat),
		SpecId: d.SpecID, Partition: partitionJSON(d.PartitionValues, d.PartitionTypes),
		FileSizeInBytes: d.FileSizeInBytes, RecordCount: d.RecordCount,
		EqualityIds: d.EqualityIDs, ReferencedDataFile: d.ReferencedDataFile,
		ContentOffset: d.ContentOffset, ContentSizeInBytes: d.ContentSize}
}

// counts is the REST CountMap of m, keys ascending; nil (left out) when
// empty.
func counts(m map[int]int64) *scantasks.CountMap {
	if len(m) == 0 {
		return nil
	}
	c := &scantasks.CountMap{}
	for k := range m {
		c.Keys = append(c.Keys, k)
	}
	sort.Ints(c.Keys)
	for _, k := range c.Keys {
		c.Values = append(c.Values, m[k])
	}
	return c
}

// partitionJSON encodes a partition tuple value by value; never nil, so
// an unpartitioned file has "partition": [].
func partitionJSON(vals []any, types []iceberg.Type) []scantasks.RawJSON {
	out := make([]scantasks.RawJSON, len(vals))
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
// planning.PartitionValueJSON).
func singleValue(v any, typ iceberg.Type) json.RawMessage {
	b, err := json.Marshal(planning.PartitionValueJSON(v, typ))
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return b
}
