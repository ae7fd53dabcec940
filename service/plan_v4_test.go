package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// planFixture is a v4 table partitioned by region with 8 files of 100 rows:
// file i has region eu (even i) or us, ids [100i, 100i+99] and scores
// [10i, 10i+9], except file 1 whose scores are [900, 1100].
type planFixture struct {
	svc   *service.Service
	st    store.Store
	dir   string
	id    service.Ident
	snaps []int64 // snapshot ids, oldest first
}

const planRows = 100

func newPlanFixture(t *testing.T, backend string, opts service.Options) *planFixture {
	ctx := context.Background()
	st := openStore(t, backend)
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &planFixture{svc: service.New(st, storage.NewProvider(), opts), st: st, dir: t.TempDir(),
		id: service.Ident{Namespace: []string{"ns"}, Name: "p"}}
	_, err := f.svc.CreateWarehouse(ctx, "wh", "file://"+f.dir, nil)
	require.NoError(t, err)
	_, err = f.svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	_, err = f.svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
		Name: "p", Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},` +
			`{"id":2,"name":"region","type":"string","required":false},{"id":3,"name":"score","type":"double","required":false}]}`),
		Spec: []byte(`{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"region","transform":"identity"}]}`),
	})
	require.NoError(t, err)
	f.add(t, 0, 8)
	return f
}

// file is the location of file i, relative to the table.
func planFile(i int) string { return fmt.Sprintf("data/f%03d.parquet", i) }

// add commits files [from, to) in one snapshot, in region order so that
// leaves cluster by region.
func (f *planFixture) add(t *testing.T, from, to int) {
	var adds []service.DataFileInput
	for i := from; to > i; i++ {
		region, lo, hi := "us", float64(10*i), float64(10*i+9)
		if i%2 == 0 {
			region = "eu"
		}
		if i == 1 {
			lo, hi = 900, 1100
		}
		adds = append(adds, service.DataFileInput{Location: planFile(i), FileFormat: "parquet", RecordCount: planRows, FileSizeInBytes: 1000,
			Partition: map[string]json.RawMessage{"region": json.RawMessage(`"` + region + `"`)},
			Stats: map[int]*v4manifest.FieldStats{
				1: {LowerBound: int64(100 * i), UpperBound: int64(100*i + 99), ValueCount: ptr(int64(planRows)), NullValueCount: ptr(int64(0))},
				3: {LowerBound: lo, UpperBound: hi, ValueCount: ptr(int64(planRows)), NullValueCount: ptr(int64(0))},
			}})
	}
	slices.SortStableFunc(adds, func(a, b service.DataFileInput) int {
		return strings.Compare(string(a.Partition["region"]), string(b.Partition["region"]))
	})
	res, err := f.svc.CommitFiles(context.Background(), "wh", service.FilesCommit{Ident: f.id, AddDataFiles: adds})
	require.NoError(t, err)
	f.snaps = append(f.snaps, currentSnapshot(t, res.Metadata))
}

// tableDir is the table's directory on disk.
func (f *planFixture) tableDir(t *testing.T) string {
	res, err := f.svc.Tables().LoadTable(context.Background(), "wh", f.id, "", service.NoDelegation)
	require.NoError(t, err)
	var m struct {
		Location string `json:"location"`
	}
	require.NoError(t, json.Unmarshal(res.Metadata, &m))
	return strings.TrimPrefix(m.Location, "file://")
}

func currentSnapshot(t *testing.T, metadata []byte) int64 {
	var m struct {
		Current int64 `json:"current-snapshot-id"`
	}
	require.NoError(t, json.Unmarshal(metadata, &m))
	return m.Current
}

// plan plans req and returns the planned files (relative, sorted), paging
// through plan tasks when there are any.
func (f *planFixture) plan(t *testing.T, req service.PlanRequest) ([]string, service.PlanResult, error) {
	ctx := context.Background()
	res, err := f.svc.Planner().PlanScan(ctx, "wh", f.id, req)
	if err != nil {
		return nil, res, err
	}
	files := []string{}
	collect := func(r service.PlanResult) {
		for _, task := range r.Tasks {
			files = append(files, relFile(task.Location))
		}
	}
	collect(res)
	for _, tok := range res.PlanTasks {
		page, err := f.svc.Planner().FetchScanTasks(ctx, "wh", f.id, tok, req.ColumnFilesOK)
		if err != nil {
			return nil, res, err
		}
		collect(page)
	}
	slices.Sort(files)
	return files, res, nil
}

// relFile is a planned location relative to the table ("data/...").
func relFile(loc string) string {
	_, rel, _ := strings.Cut(loc, "/data/")
	return "data/" + rel
}

func files(ids ...int) []string {
	out := []string{}
	for _, i := range ids {
		out = append(out, planFile(i))
	}
	slices.Sort(out)
	return out
}

func TestPlanScanFilters(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{})
			cases := []struct {
				name   string
				filter string
				cs     bool
				want   []string
			}{
				{"no filter", ``, true, files(0, 1, 2, 3, 4, 5, 6, 7)},
				{"partition column", `{"type":"eq","term":"region","value":"eu"}`, true, files(0, 2, 4, 6)},
				{"stats-only column", `{"type":"and","left":{"type":"gt-eq","term":"id","value":250},"right":{"type":"lt","term":"id","value":400}}`, true, files(2, 3)},
				{"partition and stats", `{"type":"and","left":{"type":"eq","term":"region","value":"eu"},"right":{"type":"lt","term":"id","value":300}}`, true, files(0, 2)},
				{"or", `{"type":"or","left":{"type":"gt","term":"score","value":800},"right":{"type":"eq","term":"id","value":750}}`, true, files(1, 7)},
				{"not", `{"type":"not","child":{"type":"lt-eq","term":"id","value":599}}`, true, files(6, 7)},
				{"in", `{"type":"in","term":"id","values":[5,705]}`, true, files(0, 7)},
				{"case-insensitive", `{"type":"eq","term":"REGION","value":"us"}`, false, files(1, 3, 5, 7)},
				{"nothing", `{"type":"gt","term":"id","value":100000}`, true, files()},
			}
			for _, c := range cases {
				got, _, err := f.plan(t, service.PlanRequest{Filter: json.RawMessage(c.filter), CaseSensitive: c.cs})
				require.NoError(t, err, c.name)
				require.Equal(t, c.want, got, c.name)
			}
		})
	}
}

func TestPlanScanErrors(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{})
			bad := func(req service.PlanRequest, kind fault.Kind, text string) {
				t.Helper()
				_, _, err := f.plan(t, req)
				require.Error(t, err)
				require.Equal(t, kind, fault.KindOf(err), "%v", err)
				require.Contains(t, err.Error(), text)
				require.NotContains(t, err.Error(), f.dir, "no server path in messages")
			}
			bad(service.PlanRequest{Filter: json.RawMessage(`{"type":"eq","term":"nope","value":1}`), CaseSensitive: true}, fault.BadRequest, "nope")
			bad(service.PlanRequest{Filter: json.RawMessage(`{"type":"eq","term":"REGION","value":"eu"}`), CaseSensitive: true}, fault.BadRequest, "REGION")
			bad(service.PlanRequest{Filter: json.RawMessage(`{"type":`), CaseSensitive: true}, fault.BadRequest, "not valid JSON")
			bad(service.PlanRequest{Filter: json.RawMessage(`{"type":"eq","term":"id","value":"x"}`), CaseSensitive: true}, fault.BadRequest, "invalid scan filter")
			bad(service.PlanRequest{Select: []string{"nope"}, CaseSensitive: true}, fault.BadRequest, "nope")
			bad(service.PlanRequest{SnapshotID: ptr(int64(424242)), CaseSensitive: true}, fault.NotFound, "424242")
			bad(service.PlanRequest{StartSnapshotID: ptr(int64(424242)), EndSnapshotID: &f.snaps[0], CaseSensitive: true}, fault.NotFound, "424242")
			bad(service.PlanRequest{StartSnapshotID: &f.snaps[0], CaseSensitive: true}, fault.BadRequest, "end-snapshot-id")
		})
	}
}

func TestPlanScanSnapshots(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{})
			f.add(t, 8, 10)
			f.add(t, 10, 11)
			s1, s2, s3 := f.snaps[0], f.snaps[1], f.snaps[2]
			cases := []struct {
				name string
				req  service.PlanRequest
				want []string
			}{
				{"time travel", service.PlanRequest{SnapshotID: &s1}, files(0, 1, 2, 3, 4, 5, 6, 7)},
				{"current", service.PlanRequest{}, files(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
				{"appends after s1", service.PlanRequest{StartSnapshotID: &s1, EndSnapshotID: &s3}, files(8, 9, 10)},
				{"appends after s2", service.PlanRequest{StartSnapshotID: &s2, EndSnapshotID: &s3}, files(10)},
				{"appends s1..s2", service.PlanRequest{StartSnapshotID: &s1, EndSnapshotID: &s2}, files(8, 9)},
				{"empty range", service.PlanRequest{StartSnapshotID: &s3, EndSnapshotID: &s3}, files()},
				{"incremental with filter", service.PlanRequest{StartSnapshotID: &s1, EndSnapshotID: &s3,
					Filter: json.RawMessage(`{"type":"eq","term":"region","value":"eu"}`)}, files(8, 10)},
			}
			for _, c := range cases {
				c.req.CaseSensitive = true
				got, _, err := f.plan(t, c.req)
				require.NoError(t, err, c.name)
				require.Equal(t, c.want, got, c.name)
			}
			_, _, err := f.plan(t, service.PlanRequest{StartSnapshotID: &s3, EndSnapshotID: &s1})
			require.Equal(t, fault.BadRequest, fault.KindOf(err), "start after end: %v", err)
		})
	}
}

// updateScores commits column files for field 3 (score) of files ids: the
// new scores are 7r·1.000001 for row r, so [0, 693.0007].
func (f *planFixture) updateScores(t *testing.T, ids ...int) {
	var cfs []service.ColumnFileInput
	for _, i := range ids {
		name := fmt.Sprintf("data/score-%03d.parquet", i)
		size := writeDoubles(t, filepath.Join(f.tableDir(t), name), []int{3}, planRows)
		cfs = append(cfs, service.ColumnFileInput{DataFile: planFile(i), Location: name, FileFormat: "parquet",
			FieldIDs: []int{3}, FileSizeInBytes: size, RecordCount: planRows})
	}
	_, err := f.svc.CommitColumnFiles(context.Background(), "wh", service.ColumnFilesCommit{Ident: f.id, ColumnFiles: cfs})
	require.NoError(t, err)
}

// TestPlanScanColumnFileStats: for a field a column file carries, the
// planner prunes with the column file's stats, so new values move files
// into and out of a filter's range; select returns only the column files
// the selected (and filtered) columns need.
func TestPlanScanColumnFileStats(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{})
			over := func(v int) service.PlanRequest {
				return service.PlanRequest{Filter: json.RawMessage(fmt.Sprintf(`{"type":"gt","term":"score","value":%d}`, v)), CaseSensitive: true, ColumnFilesOK: true}
			}
			got, _, err := f.plan(t, over(800))
			require.NoError(t, err)
			require.Equal(t, files(1), got)
			got, _, err = f.plan(t, over(600))
			require.NoError(t, err)
			require.Equal(t, files(1), got)

			f.updateScores(t, 0, 1)
			got, _, err = f.plan(t, over(800))
			require.NoError(t, err)
			require.Equal(t, files(), got, "file 1 moved out of score > 800")
			got, _, err = f.plan(t, over(600))
			require.NoError(t, err)
			require.Equal(t, files(0, 1), got, "file 0 moved into score > 600")

			// select id only: no column file is needed, so a client without
			// column-file support can read the plan.
			got, res, err := f.plan(t, service.PlanRequest{Select: []string{"id"}, CaseSensitive: true})
			require.NoError(t, err)
			require.Len(t, got, 8)
			for _, task := range res.Tasks {
				require.Empty(t, task.ColumnFiles, task.Location)
			}
			// selecting (or filtering on) score needs them.
			_, _, err = f.plan(t, service.PlanRequest{Select: []string{"score"}, CaseSensitive: true})
			require.Equal(t, "column-files-unsupported-by-client", reasonOf(err), "%v", err)
			req := over(600)
			req.Select, req.ColumnFilesOK = []string{"id"}, false
			_, _, err = f.plan(t, req)
			require.Equal(t, "column-files-unsupported-by-client", reasonOf(err), "filter columns count as selected: %v", err)
			_, res, err = f.plan(t, service.PlanRequest{Select: []string{"score"}, CaseSensitive: true, ColumnFilesOK: true})
			require.NoError(t, err)
			withCF := 0
			for _, task := range res.Tasks {
				if len(task.ColumnFiles) > 0 {
					withCF++
					require.Equal(t, []int{3}, task.ColumnFiles[0].FieldIDs)
				}
			}
			require.Equal(t, 2, withCF)
		})
	}
}

func reasonOf(err error) string {
	var e *fault.Error
	if err == nil {
		return ""
	}
	if errorsAs(err, &e) {
		return e.Reason
	}
	return ""
}

// TestPlanScanPaging: a plan over more than MaxPlanTasks files comes back as
// plan tasks; fetching them (from another Service instance over the same
// store, as another replica would) yields exactly the unpaged plan. A
// forged or foreign plan task is 404 NoSuchPlanTask.
func TestPlanScanPaging(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{MaxPlanTasks: 3, MaxLeafEntries: 2})
			f.add(t, 8, 14)
			replica := service.New(f.st, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			for _, filter := range []string{``, `{"type":"eq","term":"region","value":"eu"}`, `{"type":"gt-eq","term":"id","value":500}`} {
				req := service.PlanRequest{Filter: json.RawMessage(filter), CaseSensitive: true}
				paged, res, err := f.plan(t, req)
				require.NoError(t, err)
				unpaged, err := replica.Planner().PlanScan(context.Background(), "wh", f.id, req)
				require.NoError(t, err)
				require.Empty(t, unpaged.PlanTasks)
				var want []string
				for _, task := range unpaged.Tasks {
					want = append(want, relFile(task.Location))
				}
				slices.Sort(want)
				require.Equal(t, want, paged, "filter %s", filter)
				if len(want) > 3 {
					require.NotEmpty(t, res.PlanTasks, "filter %s", filter)
				}
			}
			ctx := context.Background()
			_, err := f.svc.Planner().FetchScanTasks(ctx, "wh", f.id, "forged", false)
			require.Equal(t, fault.NoSuchPlanTask, fault.KindOf(err), "%v", err)

			res, err := f.svc.Planner().PlanScan(ctx, "wh", f.id, service.PlanRequest{CaseSensitive: true})
			require.NoError(t, err)
			require.NotEmpty(t, res.PlanTasks)
			// A token naming a file of the table that no root references as
			// a leaf (here a data file) is refused.
			raw, _ := base64.RawURLEncoding.DecodeString(res.PlanTasks[0])
			var tok map[string]any
			require.NoError(t, json.Unmarshal(raw, &tok))
			tok["l"] = []any{map[string]any{"s": tok["s"], "p": planFile(0)}}
			b, _ := json.Marshal(tok)
			_, err = f.svc.Planner().FetchScanTasks(ctx, "wh", f.id, base64.RawURLEncoding.EncodeToString(b), false)
			require.Equal(t, fault.NoSuchPlanTask, fault.KindOf(err), "%v", err)
			// Another table's token is refused.
			_, err = f.svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "other", Properties: map[string]string{"format-version": "4"},
				Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)})
			require.NoError(t, err)
			_, err = f.svc.Planner().FetchScanTasks(ctx, "wh", service.Ident{Namespace: []string{"ns"}, Name: "other"}, res.PlanTasks[0], false)
			require.Equal(t, fault.NoSuchPlanTask, fault.KindOf(err), "%v", err)
		})
	}
}

// TestPlanScanEqualityDeletes: an equality delete applies to the older
// files of its partition, listed once in DeleteFiles.
func TestPlanScanEqualityDeletes(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newPlanFixture(t, backend, service.Options{})
			ctx := context.Background()
			// The server checks an equality-delete file's footer against the
			// schema: a real Parquet file with the equality column.
			size := parquettest.Write(t, filepath.Join(f.tableDir(t), "data/del-eu.parquet"),
				[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}},
				func(b *array.RecordBuilder) { b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil) })
			_, err := f.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: f.id, AddEqualityDeleteFiles: []service.EqualityDeleteInput{{
				Location: "data/del-eu.parquet", FileFormat: "parquet", RecordCount: 3, FileSizeInBytes: size, EqualityIDs: []int{1},
				Partition: map[string]json.RawMessage{"region": json.RawMessage(`"eu"`)}}}})
			require.NoError(t, err)
			f.add(t, 8, 9) // newer than the delete: not affected
			res, err := f.svc.Planner().PlanScan(ctx, "wh", f.id, service.PlanRequest{CaseSensitive: true})
			require.NoError(t, err)
			require.Len(t, res.DeleteFiles, 1)
			d := res.DeleteFiles[0]
			require.Equal(t, "equality-deletes", d.Content)
			require.Equal(t, []int{1}, d.EqualityIDs)
			require.Equal(t, []any{"eu"}, d.PartitionValues)
			var hit []string
			for _, task := range res.Tasks {
				if len(task.DeleteRefs) > 0 {
					require.Equal(t, []int{0}, task.DeleteRefs)
					hit = append(hit, relFile(task.Location))
				}
			}
			slices.Sort(hit)
			require.Equal(t, files(0, 2, 4, 6), hit)
		})
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
