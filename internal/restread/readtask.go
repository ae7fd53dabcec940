package restread

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lakehold/catalog/internal/stitch"
)

// errEqualityDeletes refuses a plan whose tasks an equality delete
// applies to: package stitch does not apply them, and reading without
// them would return deleted rows.
var errEqualityDeletes = errors.New("the plan has equality deletes, which catalog read does not apply (package stitch reads deletion vectors only); convert them to deletion vectors first, e.g. by rewriting the affected files")

// planDataFile is the part of a planned DataFile the reader uses (REST
// DataFile plus the catalog's v4 extensions, docs/column-files.md).
type planDataFile struct {
	Content     string `json:"content"`
	FilePath    string `json:"file-path"`
	FileFormat  string `json:"file-format"`
	RecordCount int64  `json:"record-count"`
	FirstRowID  *int64 `json:"first-row-id"`
	ColumnFiles []struct {
		Location       string `json:"location"`
		FileFormat     string `json:"file-format"`
		FieldIDs       []int  `json:"field-ids"`
		SequenceNumber *int64 `json:"sequence-number"`
	} `json:"column-files"`
	DataSequenceNumber         *int64 `json:"data-sequence-number"`
	LatestColumnFileSnapshotID *int64 `json:"latest-column-file-snapshot-id"`
	ColumnFilesChangedSince    *int64 `json:"column-files-changed-since"`
}

type planTask struct {
	DataFile             planDataFile `json:"data-file"`
	DeleteFileReferences []int        `json:"delete-file-references"`
}

type planDeleteFile struct {
	Content            string  `json:"content"`
	FilePath           string  `json:"file-path"`
	FileFormat         string  `json:"file-format"`
	RecordCount        int64   `json:"record-count"`
	ReferencedDataFile *string `json:"referenced-data-file"`
	ContentOffset      *int64  `json:"content-offset"`
	ContentSizeInBytes *int64  `json:"content-size-in-bytes"`
}

// decodeTasks turns a plan answer's file scan tasks into stitch tasks. It
// fails on equality deletes (errEqualityDeletes), on position delete files
// that are not deletion vectors, on files that are not Parquet and on a
// task that references a delete file the answer does not hold.
func decodeTasks(ans planAnswer) ([]stitch.Task, error) {
	deletes := make([]planDeleteFile, len(ans.DeleteFiles))
	for i, raw := range ans.DeleteFiles {
		if err := json.Unmarshal(raw, &deletes[i]); err != nil {
			return nil, fmt.Errorf("plan: delete file %d: %w", i, err)
		}
	}
	out := make([]stitch.Task, 0, len(ans.FileScanTasks))
	for _, raw := range ans.FileScanTasks {
		var pt planTask
		if err := json.Unmarshal(raw, &pt); err != nil {
			return nil, fmt.Errorf("plan: file scan task: %w", err)
		}
		t, err := toStitch(pt, deletes)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func toStitch(pt planTask, deletes []planDeleteFile) (stitch.Task, error) {
	df := pt.DataFile
	if !strings.EqualFold(df.FileFormat, "parquet") {
		return stitch.Task{}, fmt.Errorf("%s: file format %q; catalog read reads Parquet only", df.FilePath, df.FileFormat)
	}
	t := stitch.Task{DataFile: df.FilePath, RecordCount: df.RecordCount, FirstRowID: df.FirstRowID,
		ColumnUpdated: df.LatestColumnFileSnapshotID != nil, ChangedOnly: df.ColumnFilesChangedSince != nil}
	if df.DataSequenceNumber != nil {
		t.SequenceNumber = *df.DataSequenceNumber
	}
	for _, cf := range df.ColumnFiles {
		if !strings.EqualFold(cf.FileFormat, "parquet") {
			return stitch.Task{}, fmt.Errorf("%s: column file format %q; catalog read reads Parquet only", cf.Location, cf.FileFormat)
		}
		c := stitch.ColumnFile{Location: cf.Location, FieldIDs: cf.FieldIDs}
		if cf.SequenceNumber != nil {
			c.SequenceNumber = *cf.SequenceNumber
		}
		t.ColumnFiles = append(t.ColumnFiles, c)
	}
	for _, ref := range pt.DeleteFileReferences {
		if ref < 0 || ref >= len(deletes) {
			return stitch.Task{}, fmt.Errorf("plan: task %s references delete file %d of %d", df.FilePath, ref, len(deletes))
		}
		d := deletes[ref]
		switch {
		case d.Content == "equality-deletes":
			return stitch.Task{}, errEqualityDeletes
		case d.Content != "position-deletes":
			return stitch.Task{}, fmt.Errorf("plan: delete file %s has content %q", d.FilePath, d.Content)
		case !strings.EqualFold(d.FileFormat, "puffin") || d.ContentOffset == nil || d.ContentSizeInBytes == nil:
			return stitch.Task{}, fmt.Errorf("plan: position delete file %s is not a deletion vector; catalog read applies deletion vectors only", d.FilePath)
		case t.DeletionVector != nil:
			return stitch.Task{}, fmt.Errorf("plan: %s has two deletion vectors", df.FilePath)
		}
		t.DeletionVector = &stitch.DeletionVector{Location: d.FilePath, Offset: *d.ContentOffset,
			SizeInBytes: *d.ContentSizeInBytes, Cardinality: d.RecordCount}
	}
	return t, nil
}
