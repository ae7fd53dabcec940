package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// function is a function object: its metadata is the UDF document, its
// location holds only metadata files.
func function(ns []string, name, loc string) *store.Object {
	o := table(ns, name, loc)
	o.Kind = store.KindFunction
	o.Metadata = []byte(`{"function-uuid":"` + name + `"}`)
	o.FormatVersion = 1
	return o
}

// testFunctions: functions are the third kind of object. They are created,
// read and listed by kind; they share one name space with tables and views
// in both directions (rename too); delete removes only a function of that name.
func testFunctions(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	for _, n := range []string{"f2", "f1"} {
		require.NoError(t, s.ObjectCreate(ctx, function([]string{"ns"}, n, "file:///tmp/wh/ns/"+n)))
	}
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")))
	v := table([]string{"ns"}, "v", "file:///tmp/wh/ns/v")
	v.Kind = store.KindView
	require.NoError(t, s.ObjectCreate(ctx, v))

	ref := func(name string, kind store.ObjectKind) store.ObjectRef {
		return store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: name, Kind: kind}
	}
	got, err := s.ObjectGet(ctx, ref("f1", store.KindFunction))
	require.NoError(t, err)
	require.Equal(t, store.KindFunction, got.Kind)
	require.JSONEq(t, `{"function-uuid":"f1"}`, string(got.Metadata))
	require.Equal(t, 1, got.FormatVersion)
	_, err = s.ObjectGet(ctx, ref("f1", store.KindView))
	require.ErrorIs(t, err, store.ErrNoSuchView, "a function is not read as a view")
	_, err = s.ObjectGet(ctx, ref("t", store.KindFunction))
	require.ErrorIs(t, err, store.ErrNoSuchFunction, "a table is not read as a function")

	for kind, want := range map[store.ObjectKind][]string{
		store.KindFunction: {"f1", "f2"}, store.KindTable: {"t"}, store.KindView: {"v"},
	} {
		names, next, err := s.ObjectList(ctx, wh, []string{"ns"}, kind, store.Page{})
		require.NoError(t, err)
		require.Equal(t, want, names, "%s", kind)
		require.Empty(t, next)
	}
	names, next, err := s.ObjectList(ctx, wh, []string{"ns"}, store.KindFunction, store.Page{Size: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"f1"}, names)
	names, _, err = s.ObjectList(ctx, wh, []string{"ns"}, store.KindFunction, store.Page{Size: 1, Token: next})
	require.NoError(t, err)
	require.Equal(t, []string{"f2"}, names)

	var ae *store.AlreadyExistsError
	for _, taken := range []struct {
		name string
		kind store.ObjectKind
	}{{"t", store.KindTable}, {"v", store.KindView}, {"f1", store.KindFunction}} {
		err = s.ObjectCreate(ctx, function([]string{"ns"}, taken.name, "file:///tmp/wh/ns/new-"+taken.name))
		require.ErrorAs(t, err, &ae, "function named as a %s", taken.kind)
		require.Equal(t, taken.kind, ae.Kind)
	}
	for _, kind := range []store.ObjectKind{store.KindTable, store.KindView} {
		o := table([]string{"ns"}, "f1", "file:///tmp/wh/ns/other-"+string(kind))
		o.Kind = kind
		err = s.ObjectCreate(ctx, o)
		require.ErrorAs(t, err, &ae, "%s named as a function", kind)
		require.Equal(t, store.KindFunction, ae.Kind)
	}
	err = s.ObjectRename(ctx, ref("t", store.KindTable), []string{"ns"}, "f1")
	require.ErrorAs(t, err, &ae, "a table renamed onto a function's name")
	require.Equal(t, store.KindFunction, ae.Kind)

	_, err = s.ObjectDelete(ctx, ref("f1", store.KindView))
	require.ErrorIs(t, err, store.ErrNoSuchView, "a function is not dropped as a view")
	_, err = s.ObjectDelete(ctx, ref("v", store.KindFunction))
	require.ErrorIs(t, err, store.ErrNoSuchFunction, "a view is not dropped as a function")
	del, err := s.ObjectDelete(ctx, ref("f1", store.KindFunction))
	require.NoError(t, err)
	require.Equal(t, "file:///tmp/wh/ns/f1", del.Location)
	_, err = s.ObjectGet(ctx, ref("f1", store.KindFunction))
	require.ErrorIs(t, err, store.ErrNoSuchFunction)
	names, _, err = s.ObjectList(ctx, wh, []string{"ns"}, store.KindFunction, store.Page{})
	require.NoError(t, err)
	require.Equal(t, []string{"f2"}, names)
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "f1", "file:///tmp/wh/ns/f1-table")),
		"a dropped function's name is free again")
}
