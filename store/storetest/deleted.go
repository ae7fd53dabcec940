package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// testSoftDelete: a soft-deleted table leaves lists and loads, frees its
// name, is listed with its metadata kept, comes back by undrop (under a new
// name when the old one is taken) and is forgotten by DeletedRemove; its
// jobs ride on the soft delete's transaction.
func testSoftDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	ref := store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "a", Kind: store.KindTable}
	o := table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")
	require.NoError(t, s.ObjectCreate(ctx, o))
	expires := time.Now().Add(time.Hour)

	_, err := s.ObjectSoftDelete(ctx, ref, "another-id", expires, false)
	require.ErrorIs(t, err, store.ErrNoSuchTable, "the id must match")
	job := store.Job{Kind: "expire-deleted", Args: json.RawMessage(`{"id":"` + o.ID + `"}`), Warehouse: wh}
	d, err := s.ObjectSoftDelete(store.WithJobs(ctx, job), ref, o.ID, expires, true)
	require.NoError(t, err)
	require.Equal(t, o.ID, d.ID)
	require.True(t, d.Purge)
	require.Len(t, listJobs(t, s, store.JobFilter{Kind: "expire-deleted"}), 1, "the job came with the soft delete")
	_, err = s.ObjectGet(ctx, ref)
	require.ErrorIs(t, err, store.ErrNoSuchTable)
	names, _, err := s.ObjectList(ctx, wh, []string{"ns"}, store.KindTable, store.Page{})
	require.NoError(t, err)
	require.Empty(t, names)

	// The name is free: a new table takes it.
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "a", "file:///tmp/wh/ns/a2")))
	list, next, err := s.DeletedList(ctx, wh, store.Page{})
	require.NoError(t, err)
	require.Empty(t, next)
	require.Len(t, list, 1)
	require.Equal(t, "a", list[0].Name)
	require.Equal(t, []string{"ns"}, list[0].Namespace)
	require.Equal(t, "file:///tmp/wh/ns/a", list[0].Location)
	require.WithinDuration(t, expires, list[0].ExpiresAt, time.Second)
	got, err := s.DeletedGet(ctx, wh, o.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"v":0}`, string(got.Metadata))

	// Undrop: the old name is taken, a new one is not.
	_, err = s.Undrop(ctx, wh, o.ID, "a")
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	back, err := s.Undrop(ctx, wh, o.ID, "a_restored")
	require.NoError(t, err)
	require.Equal(t, o.ID, back.ID)
	require.Equal(t, []string{"ns"}, back.Namespace, "always its own namespace")
	loaded, err := s.ObjectGet(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "a_restored", Kind: store.KindTable})
	require.NoError(t, err)
	require.Equal(t, o.MetadataLocation, loaded.MetadataLocation)
	require.JSONEq(t, `{"v":0}`, string(loaded.Metadata))
	_, err = s.DeletedGet(ctx, wh, o.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "undropped: no longer deleted")
	_, err = s.DeletedRemove(ctx, wh, o.ID)
	require.ErrorIs(t, err, store.ErrNotFound)

	// Paging, newest first, and the retention's removal.
	for _, n := range []string{"p1", "p2", "p3"} {
		p := table([]string{"ns"}, n, "file:///tmp/wh/ns/"+n)
		require.NoError(t, s.ObjectCreate(ctx, p))
		_, err := s.ObjectSoftDelete(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: n, Kind: store.KindTable}, p.ID, expires, false)
		require.NoError(t, err)
		time.Sleep(5 * time.Millisecond) // distinct deletion times
	}
	page, next, err := s.DeletedList(ctx, wh, store.Page{Size: 2})
	require.NoError(t, err)
	require.Len(t, page, 2)
	require.Equal(t, "p3", page[0].Name)
	require.NotEmpty(t, next)
	rest, next, err := s.DeletedList(ctx, wh, store.Page{Size: 2, Token: next})
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.Equal(t, "p1", rest[0].Name)
	require.Empty(t, next)
	_, _, err = s.DeletedList(ctx, wh, store.Page{Token: "!!"})
	require.ErrorIs(t, err, store.ErrInvalidPageToken)
	gone, err := s.DeletedRemove(ctx, wh, rest[0].ID)
	require.NoError(t, err)
	require.NotEmpty(t, gone.Metadata)
	list, _, err = s.DeletedList(ctx, wh, store.Page{})
	require.NoError(t, err)
	require.Len(t, list, 2)
}

// testDeletedLocationReserved: a soft-deleted object keeps its location
// until it is forgotten. No new object, replacement or move may take a
// location equal to, inside or containing it (its purge at the end of the
// retention would delete the newcomer's files), in its warehouse only;
// its own undrop still works, and DeletedRemove frees the location.
func testDeletedLocationReserved(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	require.NoError(t, s.WarehouseCreate(ctx, &store.Warehouse{Name: "wh2", Location: "file:///tmp/wh2"}))
	_, err := s.NamespaceCreate(ctx, "wh2", []string{"ns"}, nil)
	require.NoError(t, err)
	expires := time.Now().Add(time.Hour)
	const loc = "file:///tmp/wh/ns/a"
	o := table([]string{"ns"}, "a", loc)
	require.NoError(t, s.ObjectCreate(ctx, o))
	_, err = s.ObjectSoftDelete(ctx, o.Ref(), o.ID, expires, false)
	require.NoError(t, err)

	for name, l := range map[string]string{
		"equal":    loc,
		"inside":   loc + "/sub",
		"contains": "file:///tmp/wh/ns",
	} {
		err := s.ObjectCreate(ctx, table([]string{"ns"}, "x_"+name, l))
		require.ErrorIs(t, err, store.ErrLocationOverlap, name)
	}
	// The dropped table's own metadata registered again, under its old
	// name or a new one.
	again := table([]string{"ns"}, "a", loc)
	require.ErrorIs(t, s.ObjectCreate(ctx, again), store.ErrLocationOverlap, "its old name")
	again.Name = "a_copy"
	require.ErrorIs(t, s.ObjectCreate(ctx, again), store.ErrLocationOverlap, "a new name")
	view := table([]string{"ns"}, "v", loc+"/v")
	view.Kind = store.KindView
	require.ErrorIs(t, s.ObjectCreate(ctx, view), store.ErrLocationOverlap, "a view")
	// A replacement (register with overwrite) is checked as a creation.
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "r", "file:///tmp/wh/ns/r")))
	require.ErrorIs(t, s.ObjectReplace(ctx, table([]string{"ns"}, "r", loc)), store.ErrLocationOverlap, "replace")
	// A move (set-location) of a live table into it.
	b := table([]string{"ns"}, "b", "file:///tmp/wh/ns/b")
	require.NoError(t, s.ObjectCreate(ctx, b))
	sw := swapTo(b, "file:///tmp/wh/ns/a/b/m.json")
	sw.NewLocation = loc + "/b"
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{sw}), store.ErrLocationOverlap, "set-location")
	// A name sharing only a string prefix is another directory, and
	// another warehouse has locations of its own.
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "a2", loc+"2")))
	other := table([]string{"ns"}, "a", loc)
	other.Warehouse = "wh2"
	require.NoError(t, s.ObjectCreate(ctx, other))

	// A new name only while its own is taken.
	_, err = s.Undrop(ctx, wh, o.ID, "a_back")
	require.ErrorIs(t, err, store.ErrOwnNameFree)
	taker := table([]string{"ns"}, "a", "file:///tmp/wh/ns/a_live")
	require.NoError(t, s.ObjectCreate(ctx, taker))
	// Its undrop does not collide with its own deleted row, under a new
	// name as under the old one; live again, it still holds the location.
	back, err := s.Undrop(ctx, wh, o.ID, "a_back")
	require.NoError(t, err)
	require.Equal(t, loc, back.Location)
	require.ErrorIs(t, s.ObjectCreate(ctx, table([]string{"ns"}, "x", loc)), store.ErrLocationOverlap)
	_, err = s.ObjectSoftDelete(ctx, back.Ref(), o.ID, expires, true)
	require.NoError(t, err)
	again, err = s.Undrop(ctx, wh, o.ID, "a_back")
	require.NoError(t, err, "its own name now")

	// Forgotten (the end of its retention), it frees the location.
	_, err = s.ObjectSoftDelete(ctx, again.Ref(), o.ID, expires, true)
	require.NoError(t, err)
	require.ErrorIs(t, s.ObjectCreate(ctx, table([]string{"ns"}, "x", loc)), store.ErrLocationOverlap)
	_, err = s.DeletedRemove(ctx, wh, o.ID)
	require.NoError(t, err)
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "x", loc)))
}
