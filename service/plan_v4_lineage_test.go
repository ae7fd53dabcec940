package service_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

// lineageFixture is an unpartitioned v4 table (id long, a long, b long)
// whose files are real Parquet files, so plans can be read with stitch.
type lineageFixture struct {
	svc *service.Service
	id  service.Ident
	loc string // table location (file://...)
	sc  *iceberg.Schema
}

const linRows = 4

func newLineageFixture(t *testing.T, backend string, opts service.Options) *lineageFixture {
	ctx := context.Background()
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &lineageFixture{svc: service.New(openStore(t, backend), storage.NewProvider(), opts), id: service.Ident{Namespace: []string{"ns"}, Name: "l"},
		sc: iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "a", Type: iceberg.PrimitiveTypes.Int64}, iceberg.NestedField{ID: 3, Name: "b", Type: iceberg.PrimitiveTypes.Int64})}
	_, err := f.svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = f.svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	schema, err := json.Marshal(f.sc)
	require.NoError(t, err)
	_, err = f.svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "l", Properties: map[string]string{"format-version": "4"}, Schema: schema})
	require.NoError(t, err)
	f.loc = f.meta(t).Location
	return f
}

// tableMeta is the part of the table metadata these tests look at.
type tableMeta struct {
	Location  string `json:"location"`
	NextRowID int64  `json:"next-row-id"`
	Current   int64  `json:"current-snapshot-id"`
	Snapshots []struct {
		ID  int64 `json:"snapshot-id"`
		Seq int64 `json:"sequence-number"`
	} `json:"snapshots"`
}

func (f *lineageFixture) meta(t *testing.T) tableMeta {
	res, err := f.svc.Tables().LoadTable(context.Background(), "wh", f.id, "", service.NoDelegation)
	require.NoError(t, err)
	var m tableMeta
	require.NoError(t, json.Unmarshal(res.Metadata, &m))
	return m
}

// seq is the sequence number of a snapshot.
func (m tableMeta) seq(t *testing.T, id int64) int64 {
	for _, s := range m.Snapshots {
		if s.ID == id {
			return s.Seq
		}
	}
	t.Fatalf("no snapshot %d", id)
	return 0
}

func (f *lineageFixture) path(rel string) string {
	return filepath.Join(strings.TrimPrefix(f.loc, "file://"), rel)
}

// writeLongs writes int64 columns by field id; values[id][row], -1 = null.
func writeLongs(t *testing.T, path string, ids []int, values map[int][]int64) int64 {
	fields := make([]arrow.Field, len(ids))
	for i, id := range ids {
		fields[i] = arrow.Field{Name: "c" + strconv.Itoa(id), Type: arrow.PrimitiveTypes.Int64, Nullable: id != 1,
			Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})}
	}
	return parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		for i, id := range ids {
			for _, v := range values[id] {
				if v < 0 {
					b.Field(i).(*array.Int64Builder).AppendNull()
				} else {
					b.Field(i).(*array.Int64Builder).Append(v)
				}
			}
		}
	})
}

// add commits base files named "data/<name>.parquet" (id = 100k+r, a = r,
// b = 10r for the k-th name) in one snapshot and returns its id.
func (f *lineageFixture) add(t *testing.T, names ...string) int64 {
	var adds []service.DataFileInput
	for k, name := range names {
		rel := "data/" + name + ".parquet"
		vals := map[int][]int64{}
		for r := int64(0); r < linRows; r++ {
			vals[1] = append(vals[1], 100*int64(k)+r)
			vals[2] = append(vals[2], r)
			vals[3] = append(vals[3], 10*r)
		}
		size := writeLongs(t, f.path(rel), []int{1, 2, 3}, vals)
		adds = append(adds, service.DataFileInput{Location: rel, FileFormat: "parquet", RecordCount: linRows, FileSizeInBytes: size})
	}
	res, err := f.svc.CommitFiles(context.Background(), "wh", service.FilesCommit{Ident: f.id, AddDataFiles: adds})
	require.NoError(t, err)
	return currentSnapshot(t, res.Metadata)
}

// update commits column file "data/<cf>.parquet" of field for base file
// "data/<base>.parquet" (values 1000·field + r) and returns the snapshot
// id. lineage, when not nil, is also written as the file's
// _last_updated_sequence_number (-1 = null: updated now).
func (f *lineageFixture) update(t *testing.T, base, cf string, field int, lineage []int64) int64 {
	rel := "data/" + cf + ".parquet"
	ids, vals := []int{field}, map[int][]int64{}
	for r := int64(0); r < linRows; r++ {
		vals[field] = append(vals[field], 1000*int64(field)+r)
	}
	if lineage != nil {
		ids, vals[stitch.LastUpdatedFieldID] = append(ids, stitch.LastUpdatedFieldID), lineage
	}
	size := writeLongs(t, f.path(rel), ids, vals)
	res, err := f.svc.CommitColumnFiles(context.Background(), "wh", service.ColumnFilesCommit{Ident: f.id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: "data/" + base + ".parquet", Location: rel, FileFormat: "parquet", FieldIDs: ids, FileSizeInBytes: size, RecordCount: linRows}}})
	require.NoError(t, err)
	return currentSnapshot(t, res.Metadata)
}

// plan plans req and returns its tasks by file name ("f1"), fetching
// plan tasks when there are any.
func (f *lineageFixture) plan(t *testing.T, req service.PlanRequest) map[string]service.ScanTask {
	ctx := context.Background()
	req.CaseSensitive = true
	res, err := f.svc.Planner().PlanScan(ctx, "wh", f.id, req)
	require.NoError(t, err)
	tasks := res.Tasks
	for _, tok := range res.PlanTasks {
		page, err := f.svc.Planner().FetchScanTasks(ctx, "wh", f.id, tok, req.ColumnFilesOK)
		require.NoError(t, err)
		tasks = append(tasks, page.Tasks...)
	}
	out := map[string]service.ScanTask{}
	for _, task := range tasks {
		name := strings.TrimSuffix(filepath.Base(task.Location), ".parquet")
		_, dup := out[name]
		require.False(t, dup, "%s planned twice", name)
		out[name] = task
	}
	return out
}

// stitchTask is what a reader builds from a planned task.
func stitchTask(st service.ScanTask) stitch.Task {
	t := stitch.Task{DataFile: st.Location, RecordCount: st.RecordCount, FirstRowID: st.FirstRowID, SequenceNumber: st.DataSequenceNumber,
		ColumnUpdated: st.LatestColumnFileSnapshotID != nil, ChangedOnly: st.ColumnFilesChangedSince != nil}
	for i, cf := range st.ColumnFiles {
		c := stitch.ColumnFile{Location: cf.Location, FieldIDs: cf.FieldIDs}
		if i < len(st.ColumnFileSequenceNumbers) {
			c.SequenceNumber = st.ColumnFileSequenceNumbers[i]
		}
		t.ColumnFiles = append(t.ColumnFiles, c)
	}
	if dv := st.DeletionVector; dv != nil {
		t.DeletionVector = &stitch.DeletionVector{Location: dv.Location, Offset: dv.Offset, SizeInBytes: dv.SizeInBytes, Cardinality: dv.Cardinality}
	}
	return t
}

// read reads fields of a task with stitch: one []int64 per field (-1 =
// null).
func (f *lineageFixture) read(t *testing.T, task service.ScanTask, fields ...int) [][]int64 {
	open := func(_ context.Context, loc string) (stitch.File, error) {
		return os.Open(strings.TrimPrefix(loc, "file://"))
	}
	rec, err := stitch.Read(context.Background(), open, f.sc, stitchTask(task), fields)
	require.NoError(t, err, task.Location)
	defer rec.Release()
	out := make([][]int64, len(fields))
	for i := range fields {
		a := rec.Column(i).(*array.Int64)
		for r := 0; r < a.Len(); r++ {
			v := int64(-1)
			if a.IsValid(r) {
				v = a.Value(r)
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

// TestRowLineageAcrossColumnUpdates: column-file commits never change a
// file's first_row_id or the table's next-row-id, so every row keeps its
// _row_id; _last_updated_sequence_number moves only for the updated base
// files, per row when the column file carries it.
func TestRowLineageAcrossColumnUpdates(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newLineageFixture(t, backend, service.Options{})
			s1 := f.add(t, "f1", "f2")
			m1 := f.meta(t)
			require.Equal(t, int64(2*linRows), m1.NextRowID)
			seq1 := m1.seq(t, s1)
			before := f.plan(t, service.PlanRequest{ColumnFilesOK: true})
			require.Len(t, before, 2)
			rowIDs := map[string][]int64{}
			for name, task := range before {
				require.NotNil(t, task.FirstRowID, name)
				got := f.read(t, task, stitch.RowIDFieldID, stitch.LastUpdatedFieldID)
				rowIDs[name] = got[0]
				require.Equal(t, []int64{*task.FirstRowID, *task.FirstRowID + 1, *task.FirstRowID + 2, *task.FirstRowID + 3}, got[0], name)
				require.Equal(t, []int64{seq1, seq1, seq1, seq1}, got[1], name)
			}
			require.NotEqual(t, *before["f1"].FirstRowID, *before["f2"].FirstRowID)

			// S2 updates a of f1 in rows 1 and 3 and carries the others'
			// lineage over; S3 updates b of f2 without lineage.
			s2 := f.update(t, "f1", "cf-a1", 2, []int64{seq1, -1, seq1, -1})
			s3 := f.update(t, "f2", "cf-b2", 3, nil)
			m3 := f.meta(t)
			seq2, seq3 := m3.seq(t, s2), m3.seq(t, s3)
			require.Equal(t, m1.NextRowID, m3.NextRowID, "column updates assign no row ids")
			after := f.plan(t, service.PlanRequest{ColumnFilesOK: true})
			for name, task := range after {
				require.Equal(t, *before[name].FirstRowID, *task.FirstRowID, "%s: first_row_id kept", name)
			}
			require.Equal(t, seq2, after["f1"].DataSequenceNumber)
			require.Equal(t, seq3, after["f2"].DataSequenceNumber)

			got := f.read(t, after["f1"], stitch.RowIDFieldID, stitch.LastUpdatedFieldID, 2, 3)
			require.Equal(t, rowIDs["f1"], got[0])
			require.Equal(t, []int64{seq1, seq2, seq1, seq2}, got[1], "f1: per-row lineage from the column file")
			require.Equal(t, []int64{2000, 2001, 2002, 2003}, got[2])
			require.Equal(t, []int64{0, 10, 20, 30}, got[3])
			got = f.read(t, after["f2"], stitch.RowIDFieldID, stitch.LastUpdatedFieldID, 3)
			require.Equal(t, rowIDs["f2"], got[0])
			require.Equal(t, []int64{seq3, seq3, seq3, seq3}, got[1], "f2: no lineage column, every row as new as the update")

			// Time travel to S2: f2 untouched then.
			old := f.plan(t, service.PlanRequest{SnapshotID: &s2, ColumnFilesOK: true})
			got = f.read(t, old["f2"], stitch.RowIDFieldID, stitch.LastUpdatedFieldID)
			require.Equal(t, rowIDs["f2"], got[0])
			require.Equal(t, []int64{seq1, seq1, seq1, seq1}, got[1])

			// Selecting only id still carries the lineage column file, so
			// lineage stays per row.
			sel := f.plan(t, service.PlanRequest{Select: []string{"id"}, ColumnFilesOK: true})
			got = f.read(t, sel["f1"], stitch.LastUpdatedFieldID)
			require.Equal(t, []int64{seq1, seq2, seq1, seq2}, got[0])
		})
	}
}

// TestRowLineageStaleColumnFile: an update without lineage retires the
// lineage column of an older column file of the same base, whose values
// predate it.
func TestRowLineageStaleColumnFile(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newLineageFixture(t, backend, service.Options{})
			s1 := f.add(t, "f1")
			seq1 := f.meta(t).seq(t, s1)
			f.update(t, "f1", "cf-a", 2, []int64{seq1, -1, seq1, seq1})
			s3 := f.update(t, "f1", "cf-b", 3, nil)
			seq3 := f.meta(t).seq(t, s3)
			task := f.plan(t, service.PlanRequest{ColumnFilesOK: true})["f1"]
			for _, cf := range task.ColumnFiles {
				require.NotContains(t, cf.FieldIDs, stitch.LastUpdatedFieldID, cf.Location)
			}
			got := f.read(t, task, stitch.LastUpdatedFieldID, 2, 3)
			require.Equal(t, []int64{seq3, seq3, seq3, seq3}, got[0])
			require.Equal(t, []int64{2000, 2001, 2002, 2003}, got[1])
			require.Equal(t, []int64{3000, 3001, 3002, 3003}, got[2])
		})
	}
}

// changeNames are the planned files and, per file, its column files' names.
func changeNames(tasks map[string]service.ScanTask) map[string][]string {
	out := map[string][]string{}
	for name, task := range tasks {
		cfs := []string{}
		for _, cf := range task.ColumnFiles {
			cfs = append(cfs, strings.TrimSuffix(filepath.Base(cf.Location), ".parquet"))
		}
		slices.Sort(cfs)
		out[name] = cfs
	}
	return out
}

// TestIncrementalColumnChanges: an incremental plan from S1 to S3 (S2
// updates a of f1, S3 updates b of f2) returns f1 with a's column file
// and f2 with b's, flagged, and not the untouched f3; reading them gives
// the rows whose _last_updated_sequence_number is past the checkpoint.
func TestIncrementalColumnChanges(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newLineageFixture(t, backend, service.Options{})
			s1 := f.add(t, "f1", "f2", "f3")
			seq1 := f.meta(t).seq(t, s1)
			s2 := f.update(t, "f1", "cf-a1", 2, []int64{-1, -1, seq1, seq1})
			s3 := f.update(t, "f2", "cf-b2", 3, nil)
			m := f.meta(t)
			seq2, seq3 := m.seq(t, s2), m.seq(t, s3)
			inc := func(from, to int64, sel ...string) map[string]service.ScanTask {
				return f.plan(t, service.PlanRequest{StartSnapshotID: &from, EndSnapshotID: &to, ColumnFilesOK: true, Select: sel})
			}
			tasks := inc(s1, s3)
			require.Equal(t, map[string][]string{"f1": {"cf-a1"}, "f2": {"cf-b2"}}, changeNames(tasks))
			for name, seq := range map[string]int64{"f1": seq2, "f2": seq3} {
				require.Equal(t, &s1, tasks[name].ColumnFilesChangedSince, name)
				require.Equal(t, []int64{seq}, tasks[name].ColumnFileSequenceNumbers, name)
			}
			fresh := func(task service.ScanTask, field int) (rows, values []int64) {
				got := f.read(t, task, stitch.RowIDFieldID, stitch.LastUpdatedFieldID, field)
				for i, s := range got[1] {
					if s > seq1 {
						rows, values = append(rows, got[0][i]-*task.FirstRowID), append(values, got[2][i])
					}
				}
				return rows, values
			}
			rows, values := fresh(tasks["f1"], 2)
			require.Equal(t, []int64{0, 1}, rows, "f1: only the updated rows are past the checkpoint")
			require.Equal(t, []int64{2000, 2001}, values)
			rows, values = fresh(tasks["f2"], 3)
			require.Equal(t, []int64{0, 1, 2, 3}, rows, "f2: no lineage column, every row")
			require.Equal(t, []int64{3000, 3001, 3002, 3003}, values)
			// A change task cannot give a column that did not change.
			open := func(_ context.Context, loc string) (stitch.File, error) {
				return os.Open(strings.TrimPrefix(loc, "file://"))
			}
			_, err := stitch.Read(context.Background(), open, f.sc, stitchTask(tasks["f1"]), []int{3})
			require.ErrorIs(t, err, stitch.ErrNotChanged)

			require.Equal(t, map[string][]string{"f2": {"cf-b2"}}, changeNames(inc(s2, s3)))
			require.Equal(t, map[string][]string{"f1": {"cf-a1"}}, changeNames(inc(s1, s2)))
			require.Equal(t, map[string][]string{"f2": {"cf-b2"}}, changeNames(inc(s1, s3, "b")), "select: f1's change is not selected")
			require.Empty(t, f.plan(t, service.PlanRequest{StartSnapshotID: &s1, EndSnapshotID: &s3}),
				"a client that does not read column files gets the append scan")

			// A second update of a retires cf-a1: only the newest is listed.
			s4 := f.update(t, "f1", "cf-a1b", 2, nil)
			require.Equal(t, map[string][]string{"f1": {"cf-a1b"}, "f2": {"cf-b2"}}, changeNames(inc(s1, s4)))
			require.Equal(t, []int64{f.meta(t).seq(t, s4)}, inc(s1, s4)["f1"].ColumnFileSequenceNumbers)
		})
	}
}

// TestIncrementalColumnChangesOfAddedFiles: a file added and then updated
// in the range is returned once, whole and as of the end snapshot, also
// when the plan is split into plan tasks.
func TestIncrementalColumnChangesOfAddedFiles(t *testing.T) {
	for _, backend := range backends {
		for _, max := range []int{0, 1} {
			t.Run(backend+"/max-"+strconv.Itoa(max), func(t *testing.T) {
				f := newLineageFixture(t, backend, service.Options{MaxPlanTasks: max})
				s1 := f.add(t, "f1")
				f.add(t, "f4", "f5")
				s3 := f.update(t, "f4", "cf-a4", 2, nil)
				seq3 := f.meta(t).seq(t, s3)
				req := service.PlanRequest{StartSnapshotID: &s1, EndSnapshotID: &s3, ColumnFilesOK: true}
				if max == 1 {
					res, err := f.svc.Planner().PlanScan(context.Background(), "wh", f.id, req)
					require.NoError(t, err)
					require.NotEmpty(t, res.PlanTasks, "the append part is split into plan tasks")
				}
				tasks := f.plan(t, req)
				require.Equal(t, map[string][]string{"f4": {"cf-a4"}, "f5": {}}, changeNames(tasks))
				require.Nil(t, tasks["f4"].ColumnFilesChangedSince, "an added file is returned whole")
				got := f.read(t, tasks["f4"], stitch.LastUpdatedFieldID, 2, 3)
				require.Equal(t, []int64{seq3, seq3, seq3, seq3}, got[0])
				require.Equal(t, []int64{2000, 2001, 2002, 2003}, got[1])
				require.Equal(t, []int64{0, 10, 20, 30}, got[2])
			})
		}
	}
}

// TestIncrementalColumnChangesWithDeletes: a base whose only change in the
// range is its deletion vector is not returned; a changed base comes with
// its deletion vector as of end, so deleted rows are not read.
func TestIncrementalColumnChangesWithDeletes(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newLineageFixture(t, backend, service.Options{})
			s1 := f.add(t, "f1", "f2")
			f.update(t, "f1", "cf-a1", 2, nil)
			dvLoc := f.loc + "/data/dv.puffin"
			w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
			require.NoError(t, w.Add(f.loc+"/data/f1.parquet", []int64{1}, 0, nil))
			require.NoError(t, w.Add(f.loc+"/data/f2.parquet", []int64{2}, 0, nil))
			dvs, err := w.Flush(context.Background(), dvLoc)
			require.NoError(t, err)
			var set []service.DeletionVectorInput
			for _, d := range dvs {
				rel := "data/" + filepath.Base(*d.ReferencedDataFile())
				set = append(set, service.DeletionVectorInput{DataFile: rel, Location: dvLoc, Offset: *d.ContentOffset(),
					SizeInBytes: *d.ContentSizeInBytes(), Cardinality: d.Count()})
			}
			res, err := f.svc.CommitFiles(context.Background(), "wh", service.FilesCommit{Ident: f.id, SetDeletionVectors: set})
			require.NoError(t, err)
			s3 := currentSnapshot(t, res.Metadata)
			tasks := f.plan(t, service.PlanRequest{StartSnapshotID: &s1, EndSnapshotID: &s3, ColumnFilesOK: true})
			require.Equal(t, map[string][]string{"f1": {"cf-a1"}}, changeNames(tasks), "f2's delete is not a column change")
			got := f.read(t, tasks["f1"], stitch.RowIDFieldID, 2)
			first := *tasks["f1"].FirstRowID
			require.Equal(t, []int64{first, first + 2, first + 3}, got[0], "row 1 is deleted")
			require.Equal(t, []int64{2000, 2002, 2003}, got[1])
		})
	}
}
