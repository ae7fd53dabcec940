// Package storetest is the conformance suite every store.Store
// implementation must pass. Each test gets a fresh, empty store.
package storetest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// NewStore returns a fresh, empty store for one test.
type NewStore func(t *testing.T) store.Store

// Run runs the conformance suite.
func Run(t *testing.T, newStore NewStore) {
	tests := map[string]func(*testing.T, store.Store){
		"Warehouses":                   testWarehouses,
		"Namespaces":                   testNamespaces,
		"NamespaceListPaging":          testNamespacePaging,
		"PagingKnowsItsEnd":            testPagingKnowsItsEnd,
		"NamespaceProperties":          testNamespaceProperties,
		"ObjectsShareNameSpace":        testObjectsShareNameSpace,
		"ObjectListAndDelete":          testObjectListAndDelete,
		"Functions":                    testFunctions,
		"Rename":                       testRename,
		"LocationOverlap":              testLocationOverlap,
		"SwapCAS":                      testSwapCAS,
		"RefsMetadata":                 testRefsMetadata,
		"SwapPaths":                    testSwapPaths,
		"SwapAllOrNothing":             testSwapAllOrNothing,
		"ConcurrentSwaps":              testConcurrentSwaps,
		"ConcurrentNamespaceProp":      testConcurrentNamespaceProps,
		"Idempotency":                  testIdempotency,
		"IdempotencyLease":             testIdempotencyLease,
		"IdempotencyFence":             testIdempotencyFence,
		"AwkwardValues":                testAwkwardValues,
		"PendingDeletes":               testPendingDeletes,
		"FileIndex":                    testFileIndex,
		"FileIndexAdd":                 testFileIndexAdd,
		"FileIndexForgetLeaves":        testFileIndexForgetLeaves,
		"JobsWithChange":               testJobsWithChange,
		"JobsRun":                      testJobsRun,
		"JobsSnooze":                   testJobsSnooze,
		"JobsUniqueWaiting":            testJobsUniqueWaiting,
		"SoftDelete":                   testSoftDelete,
		"DeletedLocationReserved":      testDeletedLocationReserved,
		"EventsWithChange":             testEventsWithChange,
		"EventsFilter":                 testEventsFilter,
		"EventCursorsAndPrune":         testEventCursorsAndPrune,
		"EventsConcurrentOrder":        testEventsConcurrentOrder,
		"Reports":                      testReports,
		"ReportsGoWithTable":           testReportsGoWithTable,
		"ReportsPrune":                 testReportsPrune,
		"ReportsCap":                   testReportsCap,
		"OrphanCandidates":             testOrphanCandidates,
		"OrphanHoldSwap":               testOrphanHoldSwap,
		"OrphanClaimOrdersSwaps":       testOrphanClaimOrdersSwaps,
		"OrphanHoldSurvivesUndrop":     testOrphanHoldSurvivesUndrop,
		"OrphanTombstonesAllowReplace": testOrphanTombstonesAllowReplace,
		"OrphanTombstones":             testOrphanTombstones,
		"OrphanAdopt":                  testOrphanAdopt,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			fn(t, s)
		})
	}
}

const wh = "wh"

func setup(t *testing.T, s store.Store, namespaces ...[]string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.WarehouseCreate(ctx, &store.Warehouse{Name: wh, Location: "file:///tmp/wh"}))
	for _, ns := range namespaces {
		_, err := s.NamespaceCreate(ctx, wh, ns, nil)
		require.NoError(t, err)
	}
}

func table(ns []string, name, loc string) *store.Object {
	return &store.Object{
		Warehouse: wh, Namespace: ns, Name: name, Kind: store.KindTable, Location: loc,
		MetadataLocation: loc + "/metadata/00000-a.metadata.json", Metadata: []byte(`{"v":0}`), FormatVersion: 2,
	}
}

func testWarehouses(t *testing.T, s store.Store) {
	ctx := context.Background()
	w := &store.Warehouse{Name: "a", Location: "s3://bucket/a", Properties: map[string]string{"k": "v"}}
	require.NoError(t, s.WarehouseCreate(ctx, w))
	require.NotEmpty(t, w.ID)
	err := s.WarehouseCreate(ctx, &store.Warehouse{Name: "a", Location: "file:///x"})
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	got, err := s.WarehouseGet(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "s3://bucket/a", got.Location)
	require.Empty(t, got.StorageProfile)
	require.NoError(t, s.WarehouseSetProfile(ctx, "a", `{"type":"s3"}`))
	got, err = s.WarehouseGet(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, `{"type":"s3"}`, got.StorageProfile)
	require.ErrorIs(t, s.WarehouseSetProfile(ctx, "missing", "{}"), store.ErrNotFound)
	require.Equal(t, map[string]string{"k": "v"}, got.Properties)
	_, err = s.WarehouseGet(ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.WarehouseCreate(ctx, &store.Warehouse{Name: "b", Location: "file:///b"}))
	ws, err := s.WarehouseList(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 2)
	require.Equal(t, "a", ws[0].Name)
	_, err = s.NamespaceCreate(ctx, "a", []string{"ns"}, nil)
	require.NoError(t, err)
	require.ErrorIs(t, s.WarehouseDelete(ctx, "a"), store.ErrNotEmpty)
	require.NoError(t, s.NamespaceDelete(ctx, "a", []string{"ns"}))
	require.NoError(t, s.WarehouseDelete(ctx, "a"))
	require.ErrorIs(t, s.WarehouseDelete(ctx, "a"), store.ErrNotFound)
}

func testNamespaces(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s)
	_, err := s.NamespaceCreate(ctx, "nowh", []string{"a"}, nil)
	require.ErrorIs(t, err, store.ErrNoSuchWarehouse)
	_, err = s.NamespaceCreate(ctx, wh, []string{"a", "b"}, nil)
	require.ErrorIs(t, err, store.ErrNoSuchNamespace, "parent must exist")
	_, err = s.NamespaceCreate(ctx, wh, []string{"a"}, map[string]string{"owner": "me"})
	require.NoError(t, err)
	_, err = s.NamespaceCreate(ctx, wh, []string{"a"}, nil)
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	_, err = s.NamespaceCreate(ctx, wh, []string{"a", "b"}, nil)
	require.NoError(t, err)
	_, err = s.NamespaceCreate(ctx, wh, []string{"a", "b.c"}, nil)
	require.NoError(t, err)
	ns, err := s.NamespaceGet(ctx, wh, []string{"a"})
	require.NoError(t, err)
	require.Equal(t, "me", ns.Properties["owner"])
	_, err = s.NamespaceGet(ctx, wh, []string{"a", "x"})
	require.ErrorIs(t, err, store.ErrNoSuchNamespace)

	top, next, err := s.NamespaceList(ctx, wh, nil, store.Page{})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"a"}}, top)
	require.Empty(t, next)
	kids, _, err := s.NamespaceList(ctx, wh, []string{"a"}, store.Page{})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"a", "b"}, {"a", "b.c"}}, kids)
	_, _, err = s.NamespaceList(ctx, wh, []string{"zz"}, store.Page{})
	require.ErrorIs(t, err, store.ErrNoSuchNamespace)

	require.ErrorIs(t, s.NamespaceDelete(ctx, wh, []string{"a"}), store.ErrNotEmpty, "has children")
	require.NoError(t, s.NamespaceDelete(ctx, wh, []string{"a", "b"}))
	require.NoError(t, s.NamespaceDelete(ctx, wh, []string{"a", "b.c"}))
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"a"}, "t", "file:///tmp/wh/a/t")))
	require.ErrorIs(t, s.NamespaceDelete(ctx, wh, []string{"a"}), store.ErrNotEmpty, "has a table")
	_, err = s.ObjectDelete(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"a"}, Name: "t", Kind: store.KindTable})
	require.NoError(t, err)
	require.NoError(t, s.NamespaceDelete(ctx, wh, []string{"a"}))
	require.ErrorIs(t, s.NamespaceDelete(ctx, wh, []string{"a"}), store.ErrNoSuchNamespace)
}

func testNamespacePaging(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s)
	for i := 0; i < 7; i++ {
		_, err := s.NamespaceCreate(ctx, wh, []string{fmt.Sprintf("ns%d", i)}, nil)
		require.NoError(t, err)
	}
	var all [][]string
	tok := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10, "paging does not terminate")
		got, next, err := s.NamespaceList(ctx, wh, nil, store.Page{Token: tok, Size: 3})
		require.NoError(t, err)
		require.LessOrEqual(t, len(got), 3)
		all = append(all, got...)
		if next == "" {
			break
		}
		tok = next
	}
	require.Len(t, all, 7)
	require.Equal(t, []string{"ns6"}, all[6])
	_, _, err := s.NamespaceList(ctx, wh, nil, store.Page{Token: "!!not-base64!!", Size: 3})
	require.ErrorIs(t, err, store.ErrInvalidPageToken)
}

// testPagingKnowsItsEnd: a page is followed by a token only when more
// rows exist. A list of exactly N items in pages of N is one page without a
// token; N+1 items are a full page with a token and a last page of one item
// without. Namespaces, tables and views page alike.
func testPagingKnowsItsEnd(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"exact"}, []string{"over"})
	const n = 3
	for i := 0; i < n; i++ {
		_, err := s.NamespaceCreate(ctx, wh, []string{"exact", fmt.Sprintf("c%d", i)}, nil)
		require.NoError(t, err)
		for _, ns := range []string{"exact", "over"} {
			tb := table([]string{ns}, fmt.Sprintf("t%d", i), fmt.Sprintf("file:///tmp/wh/%s/t%d", ns, i))
			require.NoError(t, s.ObjectCreate(ctx, tb))
			v := table([]string{ns}, fmt.Sprintf("v%d", i), fmt.Sprintf("file:///tmp/wh/%s/v%d", ns, i))
			v.Kind = store.KindView
			require.NoError(t, s.ObjectCreate(ctx, v))
		}
	}
	// "over" holds one more of each; "exact" gets its extra namespace last.
	_, err := s.NamespaceCreate(ctx, wh, []string{"exact", "c9"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"over"}, "t9", "file:///tmp/wh/over/t9")))
	v := table([]string{"over"}, "v9", "file:///tmp/wh/over/v9")
	v.Kind = store.KindView
	require.NoError(t, s.ObjectCreate(ctx, v))

	// Top level: exactly two namespaces in a page of two.
	top, next, err := s.NamespaceList(ctx, wh, nil, store.Page{Size: 2})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"exact"}, {"over"}}, top)
	require.Empty(t, next, "a full last page carries no token")
	// Children of "exact": n+1 namespaces in pages of n.
	kids, next, err := s.NamespaceList(ctx, wh, []string{"exact"}, store.Page{Size: n})
	require.NoError(t, err)
	require.Len(t, kids, n)
	require.NotEmpty(t, next)
	kids, next, err = s.NamespaceList(ctx, wh, []string{"exact"}, store.Page{Size: n, Token: next})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"exact", "c9"}}, kids)
	require.Empty(t, next)
	// Unlimited: everything, no token.
	kids, next, err = s.NamespaceList(ctx, wh, []string{"exact"}, store.Page{})
	require.NoError(t, err)
	require.Len(t, kids, n+1)
	require.Empty(t, next)

	for _, kind := range []store.ObjectKind{store.KindTable, store.KindView} {
		names, next, err := s.ObjectList(ctx, wh, []string{"exact"}, kind, store.Page{Size: n})
		require.NoError(t, err)
		require.Len(t, names, n, kind)
		require.Empty(t, next, "%s: a full last page carries no token", kind)
		names, next, err = s.ObjectList(ctx, wh, []string{"over"}, kind, store.Page{Size: n})
		require.NoError(t, err)
		require.Len(t, names, n, kind)
		require.NotEmpty(t, next, kind)
		names, next, err = s.ObjectList(ctx, wh, []string{"over"}, kind, store.Page{Size: n, Token: next})
		require.NoError(t, err)
		require.Equal(t, []string{string(kind)[:1] + "9"}, names)
		require.Empty(t, next, kind)
	}
}

func testNamespaceProperties(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	removed, missing, err := s.NamespaceUpdateProperties(ctx, wh, []string{"ns"}, []string{"nope"}, map[string]string{"a": "1", "b": "2"})
	require.NoError(t, err)
	require.Empty(t, removed)
	require.Equal(t, []string{"nope"}, missing)
	removed, missing, err = s.NamespaceUpdateProperties(ctx, wh, []string{"ns"}, []string{"a"}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, removed)
	require.Empty(t, missing)
	ns, err := s.NamespaceGet(ctx, wh, []string{"ns"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"b": "2"}, ns.Properties)
	_, _, err = s.NamespaceUpdateProperties(ctx, wh, []string{"zz"}, nil, map[string]string{"a": "1"})
	require.ErrorIs(t, err, store.ErrNoSuchNamespace)
}

func testObjectsShareNameSpace(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")))
	v := table([]string{"ns"}, "t", "file:///tmp/wh/ns/v")
	v.Kind = store.KindView
	err := s.ObjectCreate(ctx, v)
	var ae *store.AlreadyExistsError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, store.KindTable, ae.Kind, "a view cannot take a table's name")
	err = s.ObjectCreate(ctx, table([]string{"ns"}, "t", "file:///tmp/wh/ns/t2"))
	require.ErrorAs(t, err, &ae)
	require.Equal(t, store.KindTable, ae.Kind)
	err = s.ObjectCreate(ctx, table([]string{"missing"}, "t", "file:///tmp/wh/missing/t"))
	require.ErrorIs(t, err, store.ErrNoSuchNamespace)

	got, err := s.ObjectGet(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
	require.NoError(t, err)
	require.JSONEq(t, `{"v":0}`, string(got.Metadata))
	require.Equal(t, "file:///tmp/wh/ns/t/metadata/00000-a.metadata.json", got.MetadataLocation)
	_, err = s.ObjectGet(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "t", Kind: store.KindView})
	require.ErrorIs(t, err, store.ErrNoSuchView, "kind must match")
	loc, err := s.ObjectMetadataLocation(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
	require.NoError(t, err)
	require.Equal(t, got.MetadataLocation, loc)
}

func testObjectListAndDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	for _, n := range []string{"c", "a", "b"} {
		require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, n, "file:///tmp/wh/ns/"+n)))
	}
	v := table([]string{"ns"}, "v", "file:///tmp/wh/ns/v")
	v.Kind = store.KindView
	require.NoError(t, s.ObjectCreate(ctx, v))
	names, next, err := s.ObjectList(ctx, wh, []string{"ns"}, store.KindTable, store.Page{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, names)
	require.Empty(t, next)
	names, next, err = s.ObjectList(ctx, wh, []string{"ns"}, store.KindTable, store.Page{Size: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, names)
	names, next, err = s.ObjectList(ctx, wh, []string{"ns"}, store.KindTable, store.Page{Size: 2, Token: next})
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, names)
	require.Empty(t, next)
	views, _, err := s.ObjectList(ctx, wh, []string{"ns"}, store.KindView, store.Page{})
	require.NoError(t, err)
	require.Equal(t, []string{"v"}, views)
	_, _, err = s.ObjectList(ctx, wh, []string{"zz"}, store.KindTable, store.Page{})
	require.ErrorIs(t, err, store.ErrNoSuchNamespace)
	// A missing namespace is reported before a bad page token.
	_, _, err = s.ObjectList(ctx, wh, []string{"zz"}, store.KindTable, store.Page{Token: "%%"})
	require.ErrorIs(t, err, store.ErrNoSuchNamespace)
	_, _, err = s.ObjectList(ctx, wh, []string{"ns"}, store.KindTable, store.Page{Token: "%%"})
	require.ErrorIs(t, err, store.ErrInvalidPageToken)
	// An empty namespace is an empty list (JSON [], not null), not a
	// missing one.
	_, err = s.NamespaceCreate(ctx, wh, []string{"empty"}, nil)
	require.NoError(t, err)
	names, next, err = s.ObjectList(ctx, wh, []string{"empty"}, store.KindTable, store.Page{})
	require.NoError(t, err)
	require.NotNil(t, names)
	require.Empty(t, names)
	require.Empty(t, next)

	ref := store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "a", Kind: store.KindTable}
	del, err := s.ObjectDelete(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "file:///tmp/wh/ns/a", del.Location)
	_, err = s.ObjectDelete(ctx, ref)
	require.ErrorIs(t, err, store.ErrNoSuchTable)
	_, err = s.ObjectDelete(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "v", Kind: store.KindTable})
	require.ErrorIs(t, err, store.ErrNoSuchTable, "a view is not dropped as a table")

	// A conditional delete: check sees the whole object; its refusal
	// leaves the object in place and comes back as it is.
	refB := store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "b", Kind: store.KindTable}
	refused := errors.New("not this one")
	var seen *store.Object
	_, err = s.ObjectDeleteIf(ctx, refB, func(o *store.Object) error { seen = o; return refused })
	require.ErrorIs(t, err, refused)
	require.NotNil(t, seen)
	require.NotEmpty(t, seen.Metadata, "check sees the full metadata")
	_, err = s.ObjectGet(ctx, refB)
	require.NoError(t, err, "a refused delete removes nothing")
	del, err = s.ObjectDeleteIf(ctx, refB, func(*store.Object) error { return nil })
	require.NoError(t, err)
	require.Equal(t, seen.MetadataLocation, del.MetadataLocation)
	require.Equal(t, seen.Metadata, del.Metadata)
	_, err = s.ObjectGet(ctx, refB)
	require.ErrorIs(t, err, store.ErrNoSuchTable)
}

func testRename(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"a"}, []string{"b"})
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"a"}, "t", "file:///tmp/wh/a/t")))
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"a"}, "u", "file:///tmp/wh/a/u")))
	v := table([]string{"a"}, "v", "file:///tmp/wh/a/v")
	v.Kind = store.KindView
	require.NoError(t, s.ObjectCreate(ctx, v))
	from := store.ObjectRef{Warehouse: wh, Namespace: []string{"a"}, Name: "t", Kind: store.KindTable}

	var ae *store.AlreadyExistsError
	require.ErrorAs(t, s.ObjectRename(ctx, from, []string{"a"}, "u"), &ae)
	require.Equal(t, store.KindTable, ae.Kind)
	require.ErrorAs(t, s.ObjectRename(ctx, from, []string{"a"}, "v"), &ae)
	require.Equal(t, store.KindView, ae.Kind)
	require.ErrorIs(t, s.ObjectRename(ctx, from, []string{"zz"}, "t"), store.ErrNoSuchNamespace)
	missing := from
	missing.Name = "nope"
	require.ErrorIs(t, s.ObjectRename(ctx, missing, []string{"b"}, "t"), store.ErrNoSuchTable)

	require.NoError(t, s.ObjectRename(ctx, from, []string{"b"}, "t2"))
	got, err := s.ObjectGet(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"b"}, Name: "t2", Kind: store.KindTable})
	require.NoError(t, err)
	require.Equal(t, "file:///tmp/wh/a/t", got.Location, "rename keeps the location")
	_, err = s.ObjectGet(ctx, from)
	require.ErrorIs(t, err, store.ErrNoSuchTable)
}

func testLocationOverlap(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "t", "s3://b/wh/ns/table")))
	for name, loc := range map[string]string{
		"equal":    "s3://b/wh/ns/table",
		"inside":   "s3://b/wh/ns/table/sub",
		"contains": "s3://b/wh/ns",
	} {
		err := s.ObjectCreate(ctx, table([]string{"ns"}, "x_"+name, loc))
		require.ErrorIs(t, err, store.ErrLocationOverlap, name)
	}
	// A name that merely shares a prefix string is a different directory,
	// whichever side of '/' its next byte sorts ('-' and '.' before, '0'
	// right after), and so is one differing only in case.
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "t2", "s3://b/wh/ns/table2")))
	for i, loc := range []string{"s3://b/wh/ns/table-x", "s3://b/wh/ns/table.x", "s3://b/wh/ns/table0", "s3://b/wh/ns/TABLE", "s3://b/wh/ns/tabl"} {
		require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, fmt.Sprintf("near%d", i), loc)), loc)
	}
	for name, loc := range map[string]string{
		"deep inside":   "s3://b/wh/ns/table/a/b/c",
		"far above":     "s3://b/wh",
		"above a near":  "s3://b/wh/ns/table-x",
		"inside a near": "s3://b/wh/ns/table.x/y",
	} {
		err := s.ObjectCreate(ctx, table([]string{"ns"}, "y_"+strings.ReplaceAll(name, " ", "_"), loc))
		require.ErrorIs(t, err, store.ErrLocationOverlap, name)
	}
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "other_bucket", "s3://c/wh/ns/table")))

	got, err := s.ObjectGet(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "t2", Kind: store.KindTable})
	require.NoError(t, err)
	err = s.ObjectsSwap(ctx, []store.Swap{{
		ObjectID: got.ID, ExpectedMetadataLocation: got.MetadataLocation, NewMetadataLocation: "s3://b/wh/ns/table/x.json",
		NewMetadata: []byte(`{}`), NewFormatVersion: 2, NewLocation: "s3://b/wh/ns/table/nested",
	}})
	require.ErrorIs(t, err, store.ErrLocationOverlap, "set-location into another table")
	err = s.ObjectsSwap(ctx, []store.Swap{{
		ObjectID: got.ID, ExpectedMetadataLocation: got.MetadataLocation, NewMetadataLocation: "s3://b/wh/ns/moved/m.json",
		NewMetadata: []byte(`{}`), NewFormatVersion: 2, NewLocation: "s3://b/wh/ns/moved",
	}})
	require.NoError(t, err)
}

func swapTo(o *store.Object, loc string) store.Swap {
	return store.Swap{ObjectID: o.ID, ExpectedMetadataLocation: o.MetadataLocation, NewMetadataLocation: loc,
		NewMetadata: []byte(`{"loc":"` + loc + `"}`), NewFormatVersion: 2}
}

func testSwapCAS(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	o := table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	require.NoError(t, s.ObjectCreate(ctx, o))
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{swapTo(o, "m1")}))
	err := s.ObjectsSwap(ctx, []store.Swap{swapTo(o, "m2")}) // stale expectation
	require.ErrorIs(t, err, store.ErrConflict)
	got, err := s.ObjectGet(ctx, o.Ref())
	require.NoError(t, err)
	require.Equal(t, "m1", got.MetadataLocation)
	require.JSONEq(t, `{"loc":"m1"}`, string(got.Metadata))
}

// testRefsMetadata: the refs-only document is stored with the pointer and
// served by ObjectGetRefs without the full one; a writer that gives none
// clears it (no stale refs document survives a swap), and loads then get
// the full document, flagged as such.
func testRefsMetadata(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	getRefs := func(o *store.Object) *store.Object {
		t.Helper()
		got, err := s.ObjectGetRefs(ctx, o.Ref())
		require.NoError(t, err)
		require.Equal(t, o.ID, got.ID)
		return got
	}

	o := table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	o.RefsMetadata = []byte(`{"v":0,"refs":"only"}`)
	require.NoError(t, s.ObjectCreate(ctx, o))
	got := getRefs(o)
	require.True(t, got.RefsOnly)
	require.Equal(t, `{"v":0,"refs":"only"}`, string(got.Metadata))
	full, err := s.ObjectGet(ctx, o.Ref())
	require.NoError(t, err)
	require.False(t, full.RefsOnly)
	require.Equal(t, `{"v":0}`, string(full.Metadata), "ObjectGet serves the full document")

	// Same as the metadata: one copy, still a refs-only answer.
	sw := swapTo(o, "m1")
	sw.NewRefsMetadata = sw.NewMetadata
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))
	got = getRefs(o)
	require.True(t, got.RefsOnly)
	require.Equal(t, string(sw.NewMetadata), string(got.Metadata))
	require.Equal(t, "m1", got.MetadataLocation)

	// Not derived: the previous refs document must not survive.
	o.MetadataLocation = "m1"
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{swapTo(o, "m2")}))
	got = getRefs(o)
	require.False(t, got.RefsOnly)
	require.Equal(t, `{"loc":"m2"}`, string(got.Metadata))

	// Tables created without one, and views, load the full document.
	u := table([]string{"ns"}, "u", "file:///tmp/wh/ns/u")
	require.NoError(t, s.ObjectCreate(ctx, u))
	got = getRefs(u)
	require.False(t, got.RefsOnly)
	require.Equal(t, `{"v":0}`, string(got.Metadata))
	_, err = s.ObjectGetRefs(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "u", Kind: store.KindView})
	require.ErrorIs(t, err, store.ErrNoSuchView)
	_, err = s.ObjectGetRefs(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "missing", Kind: store.KindTable})
	require.ErrorIs(t, err, store.ErrNoSuchTable)
}

// testSwapPaths: every way a swap can run — alone, with other tables, with
// a new location, under an Idempotency-Key fence — moves the pointer with
// compare-and-swap, stores the refs document and refuses a stale
// expectation without writing.
func testSwapPaths(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	_, err := s.IdempotencyBegin(ctx, claim("key", "fp", "me", time.Minute, time.Hour))
	require.NoError(t, err)
	fencedCtx := store.WithIdempotencyFence(ctx, "key", "me")
	other := table([]string{"ns"}, "other", "file:///tmp/wh/ns/other")
	require.NoError(t, s.ObjectCreate(ctx, other))
	for i, path := range []string{"alone", "with-another", "moved", "fenced"} {
		o := table([]string{"ns"}, path, "file:///tmp/wh/ns/"+path)
		require.NoError(t, s.ObjectCreate(ctx, o))
		sw := swapTo(o, path+"-1")
		sw.NewRefsMetadata = []byte(`{"refs":"` + path + `"}`)
		swaps, c := []store.Swap{sw}, ctx
		switch path {
		case "with-another":
			swaps = append(swaps, swapTo(other, fmt.Sprintf("other-%d", i)))
			other.MetadataLocation = fmt.Sprintf("other-%d", i)
		case "moved":
			swaps[0].NewLocation = "file:///tmp/wh/ns/moved-elsewhere"
		case "fenced":
			c = fencedCtx
		}
		stale := sw
		stale.ExpectedMetadataLocation = "not-current"
		require.ErrorIs(t, s.ObjectsSwap(c, []store.Swap{stale}), store.ErrConflict, path)
		require.NoError(t, s.ObjectsSwap(c, swaps), path)
		require.ErrorIs(t, s.ObjectsSwap(c, swaps), store.ErrConflict, "%s: the pointer moved", path)
		got, err := s.ObjectGetRefs(ctx, o.Ref())
		require.NoError(t, err)
		require.Equal(t, path+"-1", got.MetadataLocation, path)
		require.True(t, got.RefsOnly, path)
		require.Equal(t, `{"refs":"`+path+`"}`, string(got.Metadata), path)
		if path == "moved" {
			require.Equal(t, "file:///tmp/wh/ns/moved-elsewhere", got.Location)
		}
	}
	// A moved table still obeys the overlap rule.
	o := table([]string{"ns"}, "overlapping", "file:///tmp/wh/ns/overlapping")
	require.NoError(t, s.ObjectCreate(ctx, o))
	sw := swapTo(o, "x")
	sw.NewLocation = "file:///tmp/wh/ns/other/inside"
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{sw}), store.ErrLocationOverlap)
	rec, err := s.IdempotencyBegin(ctx, claim("key", "fp", "someone-else", time.Minute, time.Hour))
	require.NoError(t, err)
	require.True(t, rec.Mutated, "the fenced swap marked its key")
}

func testSwapAllOrNothing(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	a := table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")
	b := table([]string{"ns"}, "b", "file:///tmp/wh/ns/b")
	require.NoError(t, s.ObjectCreate(ctx, a))
	require.NoError(t, s.ObjectCreate(ctx, b))
	stale := swapTo(b, "b2")
	stale.ExpectedMetadataLocation = "not-current"
	err := s.ObjectsSwap(ctx, []store.Swap{swapTo(a, "a2"), stale})
	require.ErrorIs(t, err, store.ErrConflict)
	got, err := s.ObjectGet(ctx, a.Ref())
	require.NoError(t, err)
	require.Equal(t, a.MetadataLocation, got.MetadataLocation, "first swap must roll back")
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{swapTo(a, "a2"), swapTo(b, "b2")}))
}

// testConcurrentSwaps: 16 writers race on one pointer, round after round;
// exactly one wins each round and no update is lost.
func testConcurrentSwaps(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	o := table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	require.NoError(t, s.ObjectCreate(ctx, o))
	const writers, rounds = 16, 5
	for r := 0; r < rounds; r++ {
		cur, err := s.ObjectGet(ctx, o.Ref())
		require.NoError(t, err)
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, conflicts := 0, 0
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				err := s.ObjectsSwap(ctx, []store.Swap{swapTo(cur, fmt.Sprintf("r%d-w%d", r, i))})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrConflict):
					conflicts++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}(i)
		}
		wg.Wait()
		require.Equal(t, 1, wins, "round %d", r)
		require.Equal(t, writers-1, conflicts, "round %d", r)
	}
}

func testConcurrentNamespaceProps(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, err := s.NamespaceUpdateProperties(ctx, wh, []string{"ns"}, nil, map[string]string{fmt.Sprintf("k%d", i): "v"})
			require.NoError(t, err)
		}(i)
	}
	wg.Wait()
	ns, err := s.NamespaceGet(ctx, wh, []string{"ns"})
	require.NoError(t, err)
	require.Len(t, ns.Properties, 8, "no property update may be lost")
}

func claim(key, fp, owner string, lease, ttl time.Duration) store.IdempotencyClaim {
	return store.IdempotencyClaim{Key: key, Operation: "POST /a", Fingerprint: fp, Owner: owner, Lease: lease, TTL: ttl}
}

func testIdempotency(t *testing.T, s store.Store) {
	ctx := context.Background()
	rec, err := s.IdempotencyBegin(ctx, claim("k1", "fp", "o1", time.Minute, time.Hour))
	require.NoError(t, err)
	require.Nil(t, rec, "first claim owns the key")
	rec, err = s.IdempotencyBegin(ctx, claim("k1", "fp", "o2", time.Minute, time.Hour))
	require.NoError(t, err)
	require.NotNil(t, rec)
	require.False(t, rec.Done)
	require.Equal(t, "o1", rec.Owner)
	require.Equal(t, "fp", rec.Fingerprint)
	require.Equal(t, "POST /a", rec.Operation)
	require.True(t, rec.LeaseUntil.After(time.Now()), "lease is live")

	require.ErrorIs(t, s.IdempotencyFinish(ctx, &store.IdempotencyRecord{Key: "k1", Owner: "o2", Status: 200}), store.ErrNotHeld,
		"only the holder stores the outcome")
	require.ErrorIs(t, s.IdempotencyRenew(ctx, "k1", "o2", time.Minute), store.ErrNotHeld)
	require.NoError(t, s.IdempotencyRenew(ctx, "k1", "o1", time.Minute))
	require.NoError(t, s.IdempotencyAbandon(ctx, "k1", "o2"), "releasing a key one does not hold is a no-op")
	require.NoError(t, s.IdempotencyFinish(ctx, &store.IdempotencyRecord{Key: "k1", Owner: "o1", Status: 200,
		Headers: map[string]string{"ETag": "x"}, Body: []byte("body")}))
	rec, err = s.IdempotencyBegin(ctx, claim("k1", "fp", "o3", time.Minute, time.Hour))
	require.NoError(t, err)
	require.True(t, rec.Done)
	require.Equal(t, 200, rec.Status)
	require.Equal(t, "body", string(rec.Body))
	require.Equal(t, "x", rec.Headers["ETag"])
	require.ErrorIs(t, s.IdempotencyRenew(ctx, "k1", "o1", time.Minute), store.ErrNotHeld, "a finished key is not renewed")

	_, err = s.IdempotencyBegin(ctx, claim("k2", "fp", "o1", time.Minute, time.Hour))
	require.NoError(t, err)
	require.NoError(t, s.IdempotencyAbandon(ctx, "k2", "o1"))
	rec, err = s.IdempotencyBegin(ctx, claim("k2", "fp", "o2", time.Minute, time.Hour))
	require.NoError(t, err)
	require.Nil(t, rec, "an abandoned key can be claimed again")

	time.Sleep(5 * time.Millisecond)
	rec, err = s.IdempotencyBegin(ctx, claim("k1", "fp", "o4", time.Minute, time.Millisecond))
	require.NoError(t, err)
	require.Nil(t, rec, "expired outcomes are forgotten")
}

// testIdempotencyLease: a key left in flight by a holder that stopped
// renewing is taken over once its lease runs out, by the same request only;
// the old holder can then no longer finish it.
func testIdempotencyLease(t *testing.T, s store.Store) {
	ctx := context.Background()
	rec, err := s.IdempotencyBegin(ctx, claim("k", "fp", "dead", 50*time.Millisecond, time.Hour))
	require.NoError(t, err)
	require.Nil(t, rec)
	rec, err = s.IdempotencyBegin(ctx, claim("k", "fp", "live", time.Minute, time.Hour))
	require.NoError(t, err)
	require.NotNil(t, rec, "the lease still holds")
	time.Sleep(120 * time.Millisecond)
	rec, err = s.IdempotencyBegin(ctx, claim("k", "other-body", "bad", time.Minute, time.Hour))
	require.NoError(t, err)
	require.NotNil(t, rec, "another request never takes a key over")
	require.Equal(t, "fp", rec.Fingerprint)
	rec, err = s.IdempotencyBegin(ctx, claim("k", "fp", "live", time.Minute, time.Hour))
	require.NoError(t, err)
	require.Nil(t, rec, "the same request takes over an expired lease")
	require.ErrorIs(t, s.IdempotencyFinish(ctx, &store.IdempotencyRecord{Key: "k", Owner: "dead", Status: 200}), store.ErrNotHeld,
		"the old holder lost the key")
	require.NoError(t, s.IdempotencyFinish(ctx, &store.IdempotencyRecord{Key: "k", Owner: "live", Status: 204}))
	rec, err = s.IdempotencyBegin(ctx, claim("k", "fp", "x", time.Minute, time.Hour))
	require.NoError(t, err)
	require.True(t, rec.Done)
	require.Equal(t, 204, rec.Status)
}

// testIdempotencyFence: a change made under a held key marks the key in
// the same transaction; once the key is lost, fenced changes write nothing;
// a marked key is never taken over or freed.
func testIdempotencyFence(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s)
	rec, err := s.IdempotencyBegin(ctx, claim("k", "fp", "a", 50*time.Millisecond, time.Hour))
	require.NoError(t, err)
	require.Nil(t, rec)
	held := store.WithIdempotencyFence(ctx, "k", "a")
	_, err = s.NamespaceCreate(held, wh, []string{"ns"}, nil)
	require.NoError(t, err)
	rec, err = s.IdempotencyBegin(ctx, claim("k", "fp", "b", time.Minute, time.Hour))
	require.NoError(t, err)
	require.True(t, rec.Mutated, "the change marked its key")
	require.False(t, rec.Done)

	time.Sleep(100 * time.Millisecond)
	rec, err = s.IdempotencyBegin(ctx, claim("k", "fp", "b", time.Minute, time.Hour))
	require.NoError(t, err)
	require.NotNil(t, rec, "a key that changed the catalog is never taken over")
	require.NoError(t, s.IdempotencyAbandon(ctx, "k", "a"))
	rec, err = s.IdempotencyBegin(ctx, claim("k", "fp", "b", time.Minute, time.Hour))
	require.NoError(t, err)
	require.NotNil(t, rec, "nor freed by its holder")
	require.True(t, rec.Mutated)

	// A key taken over by a retry fences its old holder out.
	_, err = s.IdempotencyBegin(ctx, claim("k2", "fp", "old", 50*time.Millisecond, time.Hour))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	rec, err = s.IdempotencyBegin(ctx, claim("k2", "fp", "new", time.Minute, time.Hour))
	require.NoError(t, err)
	require.Nil(t, rec)
	_, err = s.NamespaceCreate(store.WithIdempotencyFence(ctx, "k2", "old"), wh, []string{"late"}, nil)
	require.ErrorIs(t, err, store.ErrNotHeld)
	_, err = s.NamespaceGet(ctx, wh, []string{"late"})
	require.ErrorIs(t, err, store.ErrNoSuchNamespace, "the fenced change wrote nothing")
	_, err = s.NamespaceCreate(store.WithIdempotencyFence(ctx, "k2", "new"), wh, []string{"late"}, nil)
	require.NoError(t, err)
}

// testAwkwardValues: values a database may refuse come back as
// store.ErrInvalidValue (or are stored and read back intact), never as a
// raw driver error; page tokens that decode to such bytes are refused as
// invalid tokens on every backend.
func testAwkwardValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	// Incompressible, so that Postgres cannot squeeze it into an index row.
	noise := make([]byte, 6000)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(noise)
	for name, levels := range map[string][]string{
		"nul":      {"a\x00b"},
		"bad utf8": {"a\xffb"},
		"huge":     {base64.StdEncoding.EncodeToString(noise)},
	} {
		_, err := s.NamespaceCreate(ctx, wh, levels, nil)
		if err != nil {
			require.ErrorIs(t, err, store.ErrInvalidValue, name)
			require.NotContains(t, err.Error(), "invalid byte sequence", "driver text must not leak")
			require.NotContains(t, err.Error(), "index row", "driver text must not leak")
			continue
		}
		got, err := s.NamespaceGet(ctx, wh, levels)
		require.NoError(t, err, name)
		require.Equal(t, levels, got.Levels, name)
	}
	for _, raw := range []string{"a\x00", "\xff\xfe"} {
		tok := base64.RawURLEncoding.EncodeToString([]byte(raw))
		_, _, err := s.NamespaceList(ctx, wh, nil, store.Page{Token: tok, Size: 2})
		require.ErrorIs(t, err, store.ErrInvalidPageToken, "%q", raw)
		_, _, err = s.ObjectList(ctx, wh, []string{"ns"}, store.KindTable, store.Page{Token: tok})
		require.ErrorIs(t, err, store.ErrInvalidPageToken, "%q", raw)
	}
}
