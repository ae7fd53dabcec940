package restread

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/openapi/scantasks"
)

// errEqualityDeletes refuses a plan whose tasks an equality delete
// applies to: package stitch does not apply them, and reading without
// them would return deleted rows.
var errEqualityDeletes = errors.New("the plan has equality deletes, which catalog read does not apply (package stitch reads deletion vectors only); convert them to deletion vectors first, e.g. by rewriting the affected files")

// decodeTasks turns a plan answer's file scan tasks into stitch tasks. It
// fails on equality deletes (errEqualityDeletes), on position delete files
// that are not deletion vectors, on files that are not Parquet and on a
// task that references a delete file the answer does not hold.
func decodeTasks(ans planAnswer) ([]stitch.Task, error) {
	out := make([]stitch.Task, 0, len(ans.FileScanTasks))
	for _, pt := range ans.FileScanTasks {
		t, err := toStitch(pt, ans.DeleteFiles)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// toStitch is one planned task (openapi/scantasks, the server's encoding)
// as a stitch task.
func toStitch(pt scantasks.FileScanTask, deletes []scantasks.PlanDeleteFile) (stitch.Task, error) {
	df := pt.DataFile
	if !strings.EqualFold(df.FileFormat, "parquet") {
		return stitch.Task{}, fmt.Errorf("%s: file format %q; catalog read reads Parquet only", df.FilePath, df.FileFormat)
	}
	t := stitch.Task{DataFile: df.FilePath, RecordCount: df.RecordCount, FirstRowID: df.FirstRowId,
		ColumnUpdated: df.LatestColumnFileSnapshotId != nil, ChangedOnly: df.ColumnFilesChangedSince != nil}
	if df.DataSequenceNumber != nil {
		t.SequenceNumber = *df.DataSequenceNumber
	}
	for _, cf := range df.ColumnFiles {
		if !strings.EqualFold(cf.FileFormat, "parquet") {
			return stitch.Task{}, fmt.Errorf("%s: column file format %q; catalog read reads Parquet only", cf.Location, cf.FileFormat)
		}
		c := stitch.ColumnFile{Location: cf.Location, FieldIDs: cf.FieldIds}
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
