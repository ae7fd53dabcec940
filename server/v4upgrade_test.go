package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/v4manifest"
)

// upgradeTable is a partitioned v3 table written by iceberg-go through the
// REST catalog: two appends, then a deletion vector on one data file.
func upgradeTable(t *testing.T, b *bundle, name string) *table.Table {
	t.Helper()
	ctx := context.Background()
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_bucket",
		Transform: iceberg.BucketTransform{NumBuckets: 3}})
	tbl := goTable(t, b, "db", name, []int64{1, 2, 3, 4, 5, 6, 7, 8}, catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{"format-version": "3"}))
	tbl, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 9, 10, 11, 12), 100, nil)
	require.NoError(t, err)
	return tbl
}

// addDV deletes the first and last row of the largest data file with a v3
// deletion vector (iceberg-go's DV writer, committed as a row delta).
func addDV(t *testing.T, tbl *table.Table) *table.Table {
	t.Helper()
	ctx := context.Background()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	f := tasks[0].File
	for _, task := range tasks {
		if task.File.Count() > f.Count() {
			f = task.File
		}
	}
	require.GreaterOrEqual(t, f.Count(), int64(2), "a file with two rows to delete")
	w := dv.NewDVWriter(icebergio.LocalFS{}, func(id int32) *iceberg.PartitionSpec { return tbl.Metadata().PartitionSpecByID(int(id)) })
	require.NoError(t, w.Add(f.FilePath(), []int64{0, f.Count() - 1}, f.SpecID(), f.Partition()))
	dvFiles, err := w.Flush(ctx, tbl.Location()+"/data/dv-1.puffin")
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.NewRowDelta(nil).AddDeletes(dvFiles...).Commit(ctx))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	return tbl
}

// scanRows reads a table through iceberg-go as sorted "id:data" strings.
func scanRows(t *testing.T, tbl *table.Table, opts ...table.ScanOption) []string {
	t.Helper()
	at, err := tbl.Scan(opts...).ToArrowTable(context.Background())
	require.NoError(t, err)
	defer at.Release()
	var out []string
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids, data := rec.Column(0).(*array.Int64), rec.Column(1).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, fmt.Sprintf("%d:%s", ids.Value(i), data.Value(i)))
		}
	}
	sort.Strings(out)
	return out
}

type upgradePlan struct {
	Tasks []struct {
		DataFile struct {
			FilePath        string            `json:"file-path"`
			FileFormat      string            `json:"file-format"`
			SpecID          int32             `json:"spec-id"`
			Partition       []json.RawMessage `json:"partition"`
			FileSizeInBytes int64             `json:"file-size-in-bytes"`
			RecordCount     int64             `json:"record-count"`
			FirstRowID      *int64            `json:"first-row-id"`
			ValueCounts     json.RawMessage   `json:"value-counts"`
			NullValueCounts json.RawMessage   `json:"null-value-counts"`
		} `json:"data-file"`
		DeleteFileReferences []int `json:"delete-file-references"`
	} `json:"file-scan-tasks"`
	Deletes []struct {
		Content            string `json:"content"`
		FilePath           string `json:"file-path"`
		RecordCount        int64  `json:"record-count"`
		ContentOffset      *int64 `json:"content-offset"`
		ContentSizeInBytes *int64 `json:"content-size-in-bytes"`
	} `json:"delete-files"`
}

func planOf(t *testing.T, b *bundle, path string, body map[string]any) upgradePlan {
	t.Helper()
	r := b.do(t, "POST", path+"/plan", body, "X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, r.status, "%s", r.body)
	var p upgradePlan
	require.NoError(t, json.Unmarshal(r.body, &p))
	sort.Slice(p.Tasks, func(i, j int) bool { return p.Tasks[i].DataFile.FilePath < p.Tasks[j].DataFile.FilePath })
	return p
}

// stitchRows reads a plan's tasks through clients/go/stitch (deletion
// vectors applied) as sorted "id:data" strings.
func stitchRows(t *testing.T, sc *iceberg.Schema, p upgradePlan) []string {
	t.Helper()
	open := func(_ context.Context, loc string) (stitch.File, error) {
		return os.Open(strings.TrimPrefix(loc, "file://"))
	}
	var out []string
	for _, task := range p.Tasks {
		st := stitch.Task{DataFile: task.DataFile.FilePath, RecordCount: task.DataFile.RecordCount}
		eqDeleted := false
		for _, ref := range task.DeleteFileReferences {
			d := p.Deletes[ref]
			if d.Content == "equality-deletes" {
				eqDeleted = true // applied below: the tests delete id 5 only
				continue
			}
			require.NotNil(t, d.ContentOffset, "a deletion vector")
			st.DeletionVector = &stitch.DeletionVector{Location: d.FilePath, Offset: *d.ContentOffset, SizeInBytes: *d.ContentSizeInBytes, Cardinality: d.RecordCount}
		}
		rec, err := stitch.Read(context.Background(), open, sc, st, []int{1, 2})
		require.NoError(t, err)
		ids, data := rec.Column(0).(*array.Int64), rec.Column(1).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			if eqDeleted && ids.Value(i) == 5 {
				continue
			}
			out = append(out, fmt.Sprintf("%d:%s", ids.Value(i), data.Value(i)))
		}
		rec.Release()
	}
	sort.Strings(out)
	return out
}

func upgradeTo4(t *testing.T, b *bundle, path string) response {
	t.Helper()
	return b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": []any{
		map[string]any{"action": "upgrade-format-version", "format-version": 4}}})
}

// TestUpgradeV3WithSnapshots upgrades a partitioned v3 table with a
// deletion vector, written by iceberg-go, to v4: the rows read through
// plan + stitch equal iceberg-go's own scan before the upgrade, every file
// is carried exactly (compared with the plan of the pre-upgrade snapshot,
// which still plans), and the converted tree takes v4 commits.
func TestUpgradeV3WithSnapshots(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			tbl := addDV(t, upgradeTable(t, b, "events"))
			want := scanRows(t, tbl)
			require.Len(t, want, 10, "12 rows, 2 deleted")
			old := tbl.CurrentSnapshot()
			path := "/v1/wh/namespaces/db/tables/events"

			r := upgradeTo4(t, b, path)
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, snaps, nextRowID := v4Meta(t, r)
			require.Len(t, snaps, len(tbl.Metadata().Snapshots())+1)
			conv := snaps[len(snaps)-1]
			require.Equal(t, "replace", conv.Summary["operation"])
			require.Equal(t, fmt.Sprint(old.SnapshotID), conv.Summary["v4-conversion-of-snapshot-id"])
			require.Equal(t, "10", fmt.Sprint(mustAtoi(t, conv.Summary["total-records"])-2), "12 records in the files")
			require.True(t, strings.HasSuffix(conv.RootManifest, ".parquet"))
			require.Equal(t, old.ManifestList, snaps[len(snaps)-2].RootManifest, "older snapshots keep their Avro manifest lists")
			require.Equal(t, tbl.Metadata().NextRowID(), nextRowID, "no rows are added")
			var fv struct {
				Metadata struct {
					FormatVersion int `json:"format-version"`
				} `json:"metadata"`
			}
			require.NoError(t, json.Unmarshal(r.body, &fv))
			require.Equal(t, 4, fv.Metadata.FormatVersion)

			now := planOf(t, b, path, map[string]any{})
			require.Equal(t, want, stitchRows(t, tbl.Schema(), now), "row-for-row equal to iceberg-go's scan before the upgrade")
			before := planOf(t, b, path, map[string]any{"snapshot-id": old.SnapshotID})
			require.Equal(t, want, stitchRows(t, tbl.Schema(), before), "the pre-upgrade snapshot still plans (Avro planner)")
			requireSameFiles(t, before, now)
			// An incremental scan ending at the conversion: nothing was
			// appended after the last v3 snapshot; one spanning v3 appends
			// is refused with a clear 400.
			inc := planOf(t, b, path, map[string]any{"start-snapshot-id": old.SnapshotID, "end-snapshot-id": conv.SnapshotID})
			require.Empty(t, inc.Tasks)
			first := tbl.Metadata().Snapshots()[0].SnapshotID
			r = b.do(t, "POST", path+"/plan", map[string]any{"start-snapshot-id": first, "end-snapshot-id": conv.SnapshotID}, "X-Iceberg-Column-Files", "true")
			require.Equal(t, 400, r.status, "%s", r.body)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "predates the table's upgrade")
			requireTracking(t, tbl, loc, conv.RootManifest)

			// The converted tree takes a v4 commit: remove one file.
			gone := now.Tasks[0].DataFile.FilePath
			r = b.do(t, "POST", path+"/files", map[string]any{"remove-files": []string{gone}})
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Len(t, planOf(t, b, path, map[string]any{}).Tasks, len(now.Tasks)-1)
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err, s)
	return n
}

// requireSameFiles compares, file by file, what the Avro planner returns
// for the last v3 snapshot with what the v4 planner returns after the
// upgrade: location, format, spec, partition, counts, size, first_row_id,
// column counts and the deletion vector.
func requireSameFiles(t *testing.T, v3, v4 upgradePlan) {
	t.Helper()
	require.Len(t, v4.Tasks, len(v3.Tasks))
	for i, a := range v3.Tasks {
		c := v4.Tasks[i]
		ad, cd := a.DataFile, c.DataFile
		require.Equal(t, ad.FilePath, cd.FilePath)
		require.Equal(t, strings.ToLower(ad.FileFormat), strings.ToLower(cd.FileFormat))
		require.Equal(t, ad.SpecID, cd.SpecID)
		require.Equal(t, fmt.Sprint(ad.Partition), fmt.Sprint(cd.Partition), "partition of %s", ad.FilePath)
		require.Equal(t, ad.RecordCount, cd.RecordCount)
		require.Equal(t, ad.FileSizeInBytes, cd.FileSizeInBytes)
		require.NotNil(t, cd.FirstRowID)
		require.Equal(t, ad.FirstRowID, cd.FirstRowID, "first_row_id of %s", ad.FilePath)
		if ad.ValueCounts != nil {
			require.JSONEq(t, string(ad.ValueCounts), string(cd.ValueCounts))
			require.JSONEq(t, string(ad.NullValueCounts), string(cd.NullValueCounts))
		}
		require.Len(t, c.DeleteFileReferences, len(a.DeleteFileReferences))
		for j, ref := range a.DeleteFileReferences {
			da, dc := v3.Deletes[ref], v4.Deletes[c.DeleteFileReferences[j]]
			require.Equal(t, da.FilePath, dc.FilePath)
			require.Equal(t, *da.ContentOffset, *dc.ContentOffset)
			require.Equal(t, *da.ContentSizeInBytes, *dc.ContentSizeInBytes)
			require.Equal(t, da.RecordCount, dc.RecordCount)
		}
	}
}

// requireTracking reads the converted leaves and checks each row's
// tracking against the v3 entries iceberg-go reads: snapshot ids, data and
// file sequence numbers, first_row_id, and the DV's snapshot.
func requireTracking(t *testing.T, tbl *table.Table, loc, root string) {
	t.Helper()
	fs := icebergio.LocalFS{}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	require.NoError(t, err)
	entries := map[string]iceberg.ManifestEntry{}
	dvSnap := map[string]int64{}
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			require.NoError(t, err)
			if ref := e.DataFile().ReferencedDataFile(); ref != nil {
				dvSnap[*ref] = e.SnapshotID()
				continue
			}
			entries[e.DataFile().FilePath()] = e
		}
	}
	seen := 0
	for _, rr := range readManifestFile(t, root, loc, nil) {
		for _, r := range readManifestFile(t, rr.Location, loc, &rr) {
			e, ok := entries[r.Location]
			require.True(t, ok, r.Location)
			seen++
			require.Equal(t, v4manifest.StatusExisting, r.Tracking.Status)
			require.Equal(t, e.SnapshotID(), *r.Tracking.SnapshotID)
			require.Equal(t, e.SequenceNum(), *r.Tracking.SequenceNumber)
			require.Equal(t, *e.FileSequenceNum(), *r.Tracking.FileSequenceNumber)
			require.Equal(t, *e.DataFile().FirstRowID(), *r.Tracking.FirstRowID)
			if s, ok := dvSnap[r.Location]; ok {
				require.NotNil(t, r.DeletionVector)
				require.Equal(t, s, *r.Tracking.DVSnapshotID)
			} else {
				require.Nil(t, r.DeletionVector)
			}
			require.NotEmpty(t, r.ContentStats, "stats carried")
			require.Equal(t, e.DataFile().ValueCounts()[1], *r.ContentStats[1].ValueCount)
		}
	}
	require.Equal(t, len(entries), seen)
}

// TestUpgradeRefusesPositionDeleteFiles: a v2 table with a position delete
// file is refused on the way to v4, straight from v2 and once at v3
// (position delete files have no v4 form), with a 400 naming the count and
// one file, relative to the table; nothing is committed.
func TestUpgradeRefusesPositionDeleteFiles(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			ctx := context.Background()
			tbl := goTable(t, b, "db", "posdel", []int64{1, 2, 3}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
			tasks, err := tbl.Scan().PlanFiles(ctx)
			require.NoError(t, err)
			// Metadata only: the refusal happens before any delete file is read.
			pos, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentPosDeletes,
				tbl.Location()+"/data/pos-1.parquet", iceberg.ParquetFile, nil, nil, nil, 1, 100)
			require.NoError(t, err)
			pos.ReferencedDataFile(tasks[0].File.FilePath())
			tx := tbl.NewTransaction()
			require.NoError(t, tx.NewRowDelta(nil).AddDeletes(pos.Build()).Commit(ctx))
			_, err = tx.Commit(ctx)
			require.NoError(t, err)
			path := "/v1/wh/namespaces/db/tables/posdel"

			r := upgradeTo4(t, b, path)
			require.Equal(t, 400, r.status, "%s", r.body)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "1 position delete files")
			require.Contains(t, msg, "rewrite_data_files")
			require.Equal(t, 2, formatVersion(t, b.do(t, "GET", path, nil)), "nothing committed")

			r = b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": []any{
				map[string]any{"action": "upgrade-format-version", "format-version": 3}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			r = upgradeTo4(t, b, path)
			require.Equal(t, 400, r.status, "%s", r.body)
			typ, msg := r.errorOf(t)
			require.Equal(t, "ValidationException", typ)
			require.Contains(t, msg, "1 position delete files")
			require.Contains(t, msg, "data/pos-1.parquet")
			require.Contains(t, msg, "rewrite_position_delete_files")
			require.NotContains(t, msg, "file://", "no server path in the message")
			require.NotContains(t, msg, strings.TrimPrefix(b.warehouse, "file://"))
			require.Equal(t, "not-convertible-to-v4", r.json(t)["error"].(map[string]any)["reason"])

			loaded, err := restCatalog(t, b).LoadTable(ctx, table.Identifier{"db", "posdel"})
			require.NoError(t, err)
			require.Equal(t, 3, loaded.Metadata().Version(), "nothing committed")
		})
	}
}

// TestUpgradeAfterRollback: main rolled back to a pre-upgrade snapshot of a
// v4 table plans through the Avro planner, v4 commits refuse it with a
// clear 400, and upgrade-format-version 4 converts it again.
func TestUpgradeAfterRollback(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			tbl := addDV(t, upgradeTable(t, b, "rb"))
			path := "/v1/wh/namespaces/db/tables/rb"
			require.Equal(t, 200, upgradeTo4(t, b, path).status)
			first := tbl.Metadata().Snapshots()[0].SnapshotID
			want := scanRows(t, tbl, table.WithSnapshotID(first))
			require.Len(t, want, 8, "the first append")

			r := b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": []any{map[string]any{
				"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": first}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, want, stitchRows(t, tbl.Schema(), planOf(t, b, path, map[string]any{})), "main plans through the Avro planner")
			r = b.do(t, "POST", path+"/files", map[string]any{"remove-files": []string{"data/x.parquet"}})
			require.Equal(t, 400, r.status, "%s", r.body)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "predates the table's upgrade to format version 4")
			require.NotContains(t, msg, "file://")

			r = upgradeTo4(t, b, path)
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, _ := v4Meta(t, r)
			conv := snaps[len(snaps)-1]
			require.Equal(t, fmt.Sprint(first), conv.Summary["v4-conversion-of-snapshot-id"])
			require.Equal(t, want, stitchRows(t, tbl.Schema(), planOf(t, b, path, map[string]any{})))
		})
	}
}

// TestUpgradeCarriesEqualityDeletes: an equality delete (iceberg-go,
// partitioned) is carried as a v4 equality-delete row that still applies
// to the same data files, and the rows read back are iceberg-go's; then
// the pre-upgrade snapshots are expired and the table purged.
func TestUpgradeCarriesEqualityDeletes(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			tbl := addDV(t, upgradeTable(t, b, "eq"))
			tbl = addEqualityDelete(t, tbl, 5)
			want := scanRows(t, tbl)
			require.NotContains(t, want, "5:row-5")
			old := tbl.CurrentSnapshot().SnapshotID
			path := "/v1/wh/namespaces/db/tables/eq"

			r := upgradeTo4(t, b, path)
			require.Equal(t, 200, r.status, "%s", r.body)
			now := planOf(t, b, path, map[string]any{})
			before := planOf(t, b, path, map[string]any{"snapshot-id": old})
			require.Equal(t, want, stitchRows(t, tbl.Schema(), now))
			require.Equal(t, want, stitchRows(t, tbl.Schema(), before))
			eqRefs := func(p upgradePlan) map[string][]string {
				out := map[string][]string{}
				for _, task := range p.Tasks {
					for _, ref := range task.DeleteFileReferences {
						if d := p.Deletes[ref]; d.Content == "equality-deletes" {
							out[task.DataFile.FilePath] = append(out[task.DataFile.FilePath], d.FilePath)
						}
					}
				}
				return out
			}
			require.NotEmpty(t, eqRefs(before), "iceberg-go's delete applies to some file")
			// The v4 planner matches equality deletes by partition and
			// sequence number only (iceberg-go also prunes by column
			// bounds), so it may attach one to more files: never fewer.
			after := eqRefs(now)
			for file, dels := range eqRefs(before) {
				require.Equal(t, dels, after[file], "the equality delete still applies to %s", file)
			}
			requireExpiryKeepsV4Files(t, b, tbl, "eq", want, now)
		})
	}
}

// TestUpgradeFromV2ThroughV3: files written while the table was v2 have no
// first_row_id until the conversion assigns them one (as the first v3
// manifest list would); the table converts and reads back.
// Inside a multi-table transaction the conversion is refused.
func TestUpgradeFromV2ThroughV3(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			tbl := goTable(t, b, "db", "old", []int64{1, 2, 3}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
			want := scanRows(t, tbl)
			path := "/v1/wh/namespaces/db/tables/old"
			r := b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": []any{
				map[string]any{"action": "upgrade-format-version", "format-version": 3}}})
			require.Equal(t, 200, r.status, "%s", r.body)

			r = b.do(t, "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{map[string]any{
				"identifier": map[string]any{"namespace": []string{"db"}, "name": "old"}, "requirements": []any{},
				"updates": []any{map[string]any{"action": "upgrade-format-version", "format-version": 4}}}}})
			require.Equal(t, 400, r.status, "%s", r.body)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "multi-table transaction")

			r = upgradeTo4(t, b, path)
			require.Equal(t, 200, r.status, "%s", r.body)
			now := planOf(t, b, path, map[string]any{})
			require.Len(t, now.Tasks, 1)
			require.NotNil(t, now.Tasks[0].DataFile.FirstRowID, "a file written at v2 gets row ids")
			require.EqualValues(t, 0, *now.Tasks[0].DataFile.FirstRowID)
			require.Equal(t, want, stitchRows(t, tbl.Schema(), now))
		})
	}
}

// addEqualityDelete commits, with iceberg-go, an equality delete of id.
func addEqualityDelete(t *testing.T, tbl *table.Table, id int64) *table.Table {
	t.Helper()
	ctx := context.Background()
	delSchema, err := table.SchemaToArrowSchema(iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true}), nil, true, false)
	require.NoError(t, err)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, delSchema)
	bld.Field(0).(*array.Int64Builder).Append(id)
	rec := bld.NewRecordBatch()
	bld.Release()
	defer rec.Release()
	tx := tbl.NewTransaction()
	require.NoError(t, tx.CommitEqualityDeletes(ctx, []int{1}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, nil))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	return tbl
}

// requireExpiryKeepsV4Files expires every pre-upgrade snapshot of table
// name (tbl as it was before the upgrade, now its v4 plan): their Avro
// manifest lists go, every file the v4 snapshot reads stays; then a purge
// deletes the v4 tree's files.
func requireExpiryKeepsV4Files(t *testing.T, b *bundle, tbl *table.Table, name string, want []string, now upgradePlan) {
	t.Helper()
	path := "/v1/wh/namespaces/db/tables/" + name

	// Expiring every pre-upgrade snapshot deletes their Avro
	// manifest lists and nothing the converted snapshot reads.
	r := b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/db/tables/"+name+"/maintain",
		map[string]any{"expire-older-than": "2999-01-01T00:00:00Z", "retain-last": 1})
	require.Equal(t, 200, r.status, "%s", r.body)
	var rep struct {
		Expired []int64  `json:"expired-snapshot-ids"`
		Deleted []string `json:"deleted-files"`
	}
	require.NoError(t, json.Unmarshal(r.body, &rep))
	require.Len(t, rep.Expired, len(tbl.Metadata().Snapshots()))
	for _, s := range tbl.Metadata().Snapshots() {
		require.NoFileExists(t, strings.TrimPrefix(s.ManifestList, "file://"))
	}
	require.Equal(t, want, stitchRows(t, tbl.Schema(), planOf(t, b, path, map[string]any{})), "every file the v4 snapshot reads is kept")

	// Purge deletes the files of the v4 tree (data, DV, equality delete).
	files := []string{}
	for _, task := range now.Tasks {
		files = append(files, task.DataFile.FilePath)
	}
	for _, d := range now.Deletes {
		files = append(files, d.FilePath)
	}
	require.NoError(t, restCatalog(t, b).PurgeTable(context.Background(), table.Identifier{"db", name}))
	b.drainJobs(t)
	for _, f := range files {
		require.NoFileExists(t, strings.TrimPrefix(f, "file://"))
	}
}
