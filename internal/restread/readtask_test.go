package restread

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/stitch"
)

// changePlan is a plan answer as the server sends it (docs/column-files.md,
// "Change detection"): a change task with a column file and its sequence
// number and a deletion vector, plus a key no schema declares.
const changePlan = `{"status": "completed", "plan-id": "p",
 "delete-files": [{"content": "position-deletes", "file-path": "s3://b/t/dv.puffin", "file-format": "puffin",
   "spec-id": 0, "partition": [], "file-size-in-bytes": 80, "record-count": 2,
   "referenced-data-file": "s3://b/t/a.parquet", "content-offset": 4, "content-size-in-bytes": 76}],
 "file-scan-tasks": [{"delete-file-references": [0], "residual-filter": true, "some-future-key": 1,
   "data-file": {"content": "data", "file-path": "s3://b/t/a.parquet", "file-format": "PARQUET", "spec-id": 0,
     "partition": [], "file-size-in-bytes": 900, "record-count": 10, "first-row-id": 100, "data-sequence-number": 7,
     "column-files": [{"location": "s3://b/t/c.parquet", "file-format": "parquet", "field-ids": [2, 2147483539],
       "file-size-in-bytes": 99, "sequence-number": 7}],
     "latest-column-file-snapshot-id": 55, "column-files-changed-since": 44}}]}`

// TestDecodeTasks: a plan answer decodes into the generated scan-task
// types and from them into the stitch task the server meant, unknown
// keys ignored.
func TestDecodeTasks(t *testing.T) {
	var ans planAnswer
	require.NoError(t, json.Unmarshal([]byte(changePlan), &ans))
	tasks, err := decodeTasks(ans)
	require.NoError(t, err)
	first := int64(100)
	require.Equal(t, []stitch.Task{{DataFile: "s3://b/t/a.parquet", RecordCount: 10, FirstRowID: &first, SequenceNumber: 7,
		ColumnUpdated: true, ChangedOnly: true,
		ColumnFiles:    []stitch.ColumnFile{{Location: "s3://b/t/c.parquet", FieldIDs: []int{2, 2147483539}, SequenceNumber: 7}},
		DeletionVector: &stitch.DeletionVector{Location: "s3://b/t/dv.puffin", Offset: 4, SizeInBytes: 76, Cardinality: 2}}}, tasks)
}

// TestDecodeTasksRefusals: what stitch cannot read is refused by name.
func TestDecodeTasksRefusals(t *testing.T) {
	decode := func(edit func(*planAnswer)) error {
		var ans planAnswer
		require.NoError(t, json.Unmarshal([]byte(changePlan), &ans))
		edit(&ans)
		_, err := decodeTasks(ans)
		return err
	}
	err := decode(func(a *planAnswer) { a.DeleteFiles[0].Content = "equality-deletes" })
	require.True(t, errors.Is(err, errEqualityDeletes), "%v", err)
	require.ErrorContains(t, decode(func(a *planAnswer) { a.DeleteFiles[0].ContentOffset = nil }), "not a deletion vector")
	require.ErrorContains(t, decode(func(a *planAnswer) { a.FileScanTasks[0].DeleteFileReferences = []int{1} }), "references delete file 1 of 1")
	require.ErrorContains(t, decode(func(a *planAnswer) { a.FileScanTasks[0].DataFile.FileFormat = "avro" }), "Parquet only")
	require.ErrorContains(t, decode(func(a *planAnswer) { a.FileScanTasks[0].DataFile.ColumnFiles[0].FileFormat = "orc" }), "column file format")
}
