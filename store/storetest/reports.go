package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

func tableRef(name string) store.ObjectRef {
	return store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: name, Kind: store.KindTable}
}

// addReport stores a report numbered i for the table name.
func addReport(t *testing.T, s store.Store, name, typ string, i int) *store.Report {
	t.Helper()
	r := &store.Report{Type: typ, SnapshotID: 7523141588432391877 - int64(i),
		Body: json.RawMessage(fmt.Sprintf(`{"table-name":%q,"snapshot-id":%d,"n":%d}`, name, 7523141588432391877-int64(i), i))}
	require.NoError(t, s.ReportAdd(context.Background(), tableRef(name), r))
	return r
}

func listReports(t *testing.T, s store.Store, name string, f store.ReportFilter, page store.Page) ([]*store.Report, string) {
	t.Helper()
	rs, next, err := s.ReportList(context.Background(), tableRef(name), f, page)
	require.NoError(t, err)
	return rs, next
}

// testReports: reports are stored per table, listed newest first, by
// type, since a time and page by page, and follow a rename.
func testReports(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	o := table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")
	require.NoError(t, s.ObjectCreate(ctx, o))
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "other", "file:///tmp/wh/ns/other")))
	err := s.ReportAdd(ctx, tableRef("missing"), &store.Report{Type: "scan-report", Body: json.RawMessage(`{}`)})
	require.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = s.ReportList(ctx, tableRef("missing"), store.ReportFilter{}, store.Page{})
	require.ErrorIs(t, err, store.ErrNotFound)

	var added []*store.Report
	for i := range 5 {
		typ := "scan-report"
		if i%2 == 1 {
			typ = "commit-report"
		}
		r := addReport(t, s, "a", typ, i)
		require.NotZero(t, r.ID)
		require.Equal(t, o.ID, r.TableID)
		require.WithinDuration(t, s.Now(), r.ReceivedAt, 5*time.Second)
		added = append(added, r)
	}
	addReport(t, s, "other", "scan-report", 9)

	all, next := listReports(t, s, "a", store.ReportFilter{}, store.Page{})
	require.Empty(t, next)
	require.Len(t, all, 5)
	for i, r := range all {
		want := added[4-i]
		require.Equal(t, want.ID, r.ID, "newest first")
		require.Equal(t, want.Type, r.Type)
		require.Equal(t, want.SnapshotID, r.SnapshotID, "64-bit ids exact")
		require.Equal(t, o.ID, r.TableID)
		require.JSONEq(t, string(want.Body), string(r.Body))
		require.Equal(t, want.ReceivedAt.UnixMilli(), r.ReceivedAt.UnixMilli())
	}

	commits, _ := listReports(t, s, "a", store.ReportFilter{Type: "commit-report"}, store.Page{})
	require.Len(t, commits, 2)
	require.Equal(t, []int64{added[3].ID, added[1].ID}, []int64{commits[0].ID, commits[1].ID})
	later, _ := listReports(t, s, "a", store.ReportFilter{Since: s.Now().Add(time.Hour)}, store.Page{})
	require.Empty(t, later)
	earlier, _ := listReports(t, s, "a", store.ReportFilter{Since: s.Now().Add(-time.Hour)}, store.Page{})
	require.Len(t, earlier, 5)

	// Pages of two: 2, 2, 1, then no token.
	var paged []int64
	tok := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		rs, next := listReports(t, s, "a", store.ReportFilter{}, store.Page{Token: tok, Size: 2})
		for _, r := range rs {
			paged = append(paged, r.ID)
		}
		if next == "" {
			break
		}
		tok = next
	}
	require.Equal(t, []int64{added[4].ID, added[3].ID, added[2].ID, added[1].ID, added[0].ID}, paged)
	for _, bad := range []string{"!!", "eA", "cnAxfDF8eA"} {
		_, _, err = s.ReportList(ctx, tableRef("a"), store.ReportFilter{}, store.Page{Token: bad})
		require.ErrorIs(t, err, store.ErrInvalidPageToken, bad)
	}

	// A rename keeps the table's reports; the old name has none.
	require.NoError(t, s.ObjectRename(ctx, tableRef("a"), []string{"ns"}, "b"))
	moved, _ := listReports(t, s, "b", store.ReportFilter{}, store.Page{})
	require.Len(t, moved, 5)
	_, _, err = s.ReportList(ctx, tableRef("a"), store.ReportFilter{}, store.Page{})
	require.ErrorIs(t, err, store.ErrNotFound)
	others, _ := listReports(t, s, "other", store.ReportFilter{}, store.Page{})
	require.Len(t, others, 1)
}

// testReportsGoWithTable: a table removed for good takes its reports in
// the same transaction (drop, replace, the end of a soft delete); a
// soft-deleted table keeps them, and an undrop brings them back.
// PruneReports with a cut-off before every report then finds nothing
// left: it would sweep reports of a missing table.
func testReportsGoWithTable(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	prunedNone := func() {
		t.Helper()
		n, err := s.PruneReports(ctx, time.UnixMilli(1), 0)
		require.NoError(t, err)
		require.Zero(t, n, "no report outlived its table")
	}

	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "dropped", "file:///tmp/wh/ns/dropped")))
	addReport(t, s, "dropped", "scan-report", 1)
	_, err := s.ObjectDelete(ctx, tableRef("dropped"))
	require.NoError(t, err)
	prunedNone()

	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "replaced", "file:///tmp/wh/ns/replaced")))
	addReport(t, s, "replaced", "commit-report", 1)
	require.NoError(t, s.ObjectReplace(ctx, table([]string{"ns"}, "replaced", "file:///tmp/wh/ns/replaced")))
	rs, _ := listReports(t, s, "replaced", store.ReportFilter{}, store.Page{})
	require.Empty(t, rs, "a replaced table is another table")
	prunedNone()

	soft := table([]string{"ns"}, "soft", "file:///tmp/wh/ns/soft")
	require.NoError(t, s.ObjectCreate(ctx, soft))
	addReport(t, s, "soft", "scan-report", 1)
	addReport(t, s, "soft", "commit-report", 2)
	_, err = s.ObjectSoftDelete(ctx, tableRef("soft"), soft.ID, time.Now().Add(time.Hour), true)
	require.NoError(t, err)
	prunedNone() // kept while the table may come back
	_, err = s.Undrop(ctx, wh, soft.ID, "soft")
	require.NoError(t, err)
	rs, _ = listReports(t, s, "soft", store.ReportFilter{}, store.Page{})
	require.Len(t, rs, 2, "an undrop brings the reports back")
	_, err = s.ObjectSoftDelete(ctx, tableRef("soft"), soft.ID, time.Now().Add(time.Hour), true)
	require.NoError(t, err)
	_, err = s.DeletedRemove(ctx, wh, soft.ID)
	require.NoError(t, err)
	prunedNone()
}

// testReportsPrune: the retention prune removes reports received before
// its cut-off and keeps the rest.
func testReportsPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")))
	for i := range 3 {
		addReport(t, s, "a", "scan-report", i)
	}
	n, err := s.PruneReports(ctx, s.Now().Add(-time.Hour), 0)
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = s.PruneReports(ctx, s.Now().Add(time.Second), 0)
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	rs, _ := listReports(t, s, "a", store.ReportFilter{}, store.Page{})
	require.Empty(t, rs)
}

// testReportsCap: with keep set, the prune leaves the newest keep reports
// of each table and type and removes the older ones; a type or a table
// at or under the cap keeps all of its own.
func testReportsCap(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	for _, name := range []string{"a", "b"} {
		require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, name, "file:///tmp/wh/ns/"+name)))
	}
	var scans []*store.Report
	for i := range 5 {
		scans = append(scans, addReport(t, s, "a", "scan-report", i))
	}
	for i := range 2 {
		addReport(t, s, "a", "commit-report", i)
	}
	for i := range 3 {
		addReport(t, s, "b", "scan-report", i)
	}
	n, err := s.PruneReports(ctx, s.Now().Add(-time.Hour), 3)
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "a's two oldest scan reports")
	left, _ := listReports(t, s, "a", store.ReportFilter{Type: "scan-report"}, store.Page{})
	require.Len(t, left, 3)
	for i, r := range left {
		require.Equal(t, scans[4-i].ID, r.ID, "the newest three are kept")
	}
	commits, _ := listReports(t, s, "a", store.ReportFilter{Type: "commit-report"}, store.Page{})
	require.Len(t, commits, 2)
	others, _ := listReports(t, s, "b", store.ReportFilter{}, store.Page{})
	require.Len(t, others, 3)
	n, err = s.PruneReports(ctx, s.Now().Add(-time.Hour), 3)
	require.NoError(t, err)
	require.Zero(t, n, "nothing over the cap is left")
}
