package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

func ev(op, name string) store.Event {
	return store.Event{Warehouse: wh, Namespace: []string{"ns"}, Name: name, ObjectType: "table", ObjectUUID: "uuid-" + name,
		Operation: op, RequestID: "req-" + name, Actor: "anonymous:anonymous", Body: []byte(`{"operation-type":"` + op + `"}`)}
}

func listEvents(t *testing.T, s store.Store, f store.EventFilter) []*store.Event {
	t.Helper()
	evs, err := s.ListEvents(context.Background(), f, 1000)
	require.NoError(t, err)
	return evs
}

// listEventsN is listEvents once at least n events are listed. On Postgres
// an event is listed only once every older transaction on the server has
// ended, and tests of other packages share the server: a commit that
// returned may take a moment to show.
func listEventsN(t *testing.T, s store.Store, f store.EventFilter, n int) []*store.Event {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		evs := listEvents(t, s, f)
		if len(evs) >= n || time.Now().After(deadline) {
			return evs
		}
	}
}

func ops(evs []*store.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Operation + ":" + e.Name
	}
	return out
}

// testEventsWithChange: an event is written in its change's transaction,
// so it exists if and only if the change committed, whatever the kind of
// change and however it failed.
func testEventsWithChange(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	ref := func(n string) store.ObjectRef {
		return store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: n, Kind: store.KindTable}
	}
	require.NoError(t, s.ObjectCreate(store.WithEvents(ctx, ev("create-table", "a")), table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")))
	// A create on a taken name, a lost swap, a refused drop, a rename onto
	// a taken name and a drop of a non-empty namespace write nothing.
	require.Error(t, s.ObjectCreate(store.WithEvents(ctx, ev("create-table", "a")), table([]string{"ns"}, "a", "file:///tmp/wh/ns/a2")))
	a, err := s.ObjectGet(ctx, ref("a"))
	require.NoError(t, err)
	lost := swapTo(a, "file:///tmp/wh/ns/a/metadata/00001-x.metadata.json")
	lost.ExpectedMetadataLocation = "file:///tmp/wh/ns/a/metadata/stale.metadata.json"
	require.ErrorIs(t, s.ObjectsSwap(store.WithEvents(ctx, ev("update-table", "a")), []store.Swap{lost}), store.ErrConflict)
	refused := errors.New("refused")
	_, err = s.ObjectDeleteIf(store.WithEvents(ctx, ev("drop-table", "a")), ref("a"), func(*store.Object) error { return refused })
	require.ErrorIs(t, err, refused)
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "b", "file:///tmp/wh/ns/b")))
	require.ErrorIs(t, s.ObjectRename(store.WithEvents(ctx, ev("rename-table", "a")), ref("a"), []string{"ns"}, "b"), store.ErrAlreadyExists)
	require.ErrorIs(t, s.NamespaceDelete(store.WithEvents(ctx, ev("drop-namespace", "")), wh, []string{"ns"}), store.ErrNotEmpty)
	require.Equal(t, []string{"create-table:a"}, ops(listEventsN(t, s, store.EventFilter{}, 1)))

	// Changes that land write theirs, in commit order.
	require.NoError(t, s.ObjectsSwap(store.WithEvents(ctx, ev("update-table", "a")), []store.Swap{swapTo(a, "file:///tmp/wh/ns/a/metadata/00001-x.metadata.json")}))
	require.NoError(t, s.ObjectRename(store.WithEvents(ctx, ev("rename-table", "c")), ref("a"), []string{"ns"}, "c"))
	_, err = s.ObjectDelete(store.WithEvents(ctx, ev("drop-table", "c")), ref("c"))
	require.NoError(t, err)
	_, _, err = s.NamespaceUpdateProperties(store.WithEvents(ctx, ev("update-namespace-properties", "")), wh, []string{"ns"}, nil, map[string]string{"k": "v"})
	require.NoError(t, err)
	_, err = s.NamespaceCreate(store.WithEvents(ctx, ev("create-namespace", "")), wh, []string{"ns", "child"}, nil)
	require.NoError(t, err)
	all := listEventsN(t, s, store.EventFilter{}, 6)
	require.Equal(t, []string{"create-table:a", "update-table:a", "rename-table:c", "drop-table:c",
		"update-namespace-properties:", "create-namespace:"}, ops(all))
	e := all[0]
	require.NotEmpty(t, e.ID)
	require.Equal(t, wh, e.Warehouse)
	require.Equal(t, []string{"ns"}, e.Namespace)
	require.Equal(t, "uuid-a", e.ObjectUUID)
	require.Equal(t, "req-a", e.RequestID)
	require.Equal(t, 1, e.RequestEvents)
	require.JSONEq(t, `{"operation-type":"create-table"}`, string(e.Body))
	require.WithinDuration(t, s.Now(), e.At, time.Minute)
	for i := 1; i < len(all); i++ {
		require.True(t, all[i-1].Pos.Less(all[i].Pos), "positions increase")
	}

	// Paging by position resumes after the last event read.
	page := listEvents(t, s, store.EventFilter{After: all[2].Pos})
	require.Equal(t, ops(all[3:]), ops(page))
	pos, err := store.ParseEventToken(all[2].Pos.Token())
	require.NoError(t, err)
	require.Equal(t, all[2].Pos, pos)
	_, err = store.ParseEventToken("bm90LWEtdG9rZW4")
	require.ErrorIs(t, err, store.ErrInvalidPageToken)
}

// testEventsFilter: filters by operation, object type, name (a namespace
// matches everything below it) and UUID.
func testEventsFilter(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"}, []string{"ns", "sub"}, []string{"nsx"})
	mk := func(ns []string, name, op string) {
		o := table(ns, name, "file:///tmp/wh/"+fmt.Sprint(len(ns))+"/"+name)
		e := store.Event{Warehouse: wh, Namespace: ns, Name: name, ObjectType: "table", ObjectUUID: "u-" + name, Operation: op}
		require.NoError(t, s.ObjectCreate(store.WithEvents(ctx, e), o))
	}
	mk([]string{"ns"}, "t1", "create-table")
	mk([]string{"ns", "sub"}, "t2", "create-table")
	mk([]string{"nsx"}, "t3", "register-table")
	listEventsN(t, s, store.EventFilter{}, 3) // all visible: the filters below read settled rows
	names := func(f store.EventFilter) []string {
		var out []string
		for _, e := range listEvents(t, s, f) {
			out = append(out, e.Name)
		}
		return out
	}
	require.Equal(t, []string{"t1", "t2", "t3"}, names(store.EventFilter{Warehouse: wh}))
	require.Empty(t, names(store.EventFilter{Warehouse: "other"}))
	require.Equal(t, []string{"t3"}, names(store.EventFilter{Operations: []string{"register-table"}}))
	require.Equal(t, []string{"t1", "t2"}, names(store.EventFilter{Objects: []store.EventObject{{Namespace: []string{"ns"}}}}), "ns matches ns.sub but not nsx")
	require.Equal(t, []string{"t2"}, names(store.EventFilter{Objects: []store.EventObject{{Namespace: []string{"ns", "sub"}, Name: "t2"}}}))
	require.Equal(t, []string{"t1", "t3"}, names(store.EventFilter{ObjectUUIDs: []string{"u-t1", "u-t3"}}))
	require.Empty(t, names(store.EventFilter{ObjectTypes: []string{"view"}}))
	require.Empty(t, names(store.EventFilter{Since: s.Now().Add(time.Hour)}))

	// Every list full at the bound is one statement either database
	// takes; one value more is refused, not a database error.
	full := store.EventFilter{}
	for i := range store.MaxEventFilterValues {
		v := fmt.Sprint("x", i)
		full.Operations = append(full.Operations, v)
		full.ObjectTypes = append(full.ObjectTypes, v)
		obj := store.EventObject{Namespace: []string{v}} // a namespace, or every other one a table
		if i%2 == 1 {
			obj.Name = v
		}
		full.Objects = append(full.Objects, obj)
		full.ObjectUUIDs = append(full.ObjectUUIDs, v)
	}
	full.Operations[0], full.ObjectTypes[0], full.ObjectUUIDs[0] = "create-table", "table", "u-t2"
	require.Equal(t, []string{"t2"}, names(full))
	full.ObjectUUIDs = append(full.ObjectUUIDs, "one-more")
	_, err := s.ListEvents(ctx, full, 10)
	require.ErrorIs(t, err, store.ErrInvalidValue)
}

// testEventCursorsAndPrune: a sink's cursor is kept per sink; pruning
// removes events older than the cut-off only.
func testEventCursorsAndPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	p, err := s.EventCursor(ctx, "nats")
	require.NoError(t, err)
	require.True(t, p.IsZero())
	require.NoError(t, s.ObjectCreate(store.WithEvents(ctx, ev("create-table", "a")), table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")))
	all := listEventsN(t, s, store.EventFilter{}, 1)
	require.Len(t, all, 1)
	require.NoError(t, s.SetEventCursor(ctx, "nats", all[0].Pos))
	p, err = s.EventCursor(ctx, "nats")
	require.NoError(t, err)
	require.Equal(t, all[0].Pos, p)
	p, err = s.EventCursor(ctx, "webhook")
	require.NoError(t, err)
	require.True(t, p.IsZero(), "cursors are per sink")

	n, err := s.PruneEvents(ctx, s.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Zero(t, n)
	p, err = s.EventCursor(ctx, store.PrunedCursor)
	require.NoError(t, err)
	require.True(t, p.IsZero(), "nothing pruned yet")
	n, err = s.PruneEvents(ctx, s.Now().Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Empty(t, listEvents(t, s, store.EventFilter{}))
	p, err = s.EventCursor(ctx, store.PrunedCursor)
	require.NoError(t, err)
	require.Equal(t, all[0].Pos, p, "the last position pruned")
	n, err = s.PruneEvents(ctx, s.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Zero(t, n)
	p, err = s.EventCursor(ctx, store.PrunedCursor)
	require.NoError(t, err)
	require.Equal(t, all[0].Pos, p, "an empty prune keeps it")
}

// testEventsConcurrentOrder: many writers commit at once; a reader that
// pages by position while they run sees every event exactly once, and a
// table's events in commit order.
func testEventsConcurrentOrder(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	const tables, commits = 4, 15
	for i := range tables {
		require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, fmt.Sprint("t", i), fmt.Sprint("file:///tmp/wh/ns/t", i))))
	}
	var wg sync.WaitGroup
	errs := make(chan error, tables)
	for i := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: fmt.Sprint("t", i), Kind: store.KindTable}
			for c := range commits {
				o, err := s.ObjectGet(ctx, ref)
				if err != nil {
					errs <- err
					return
				}
				e := ev("update-table", ref.Name)
				e.RequestID = fmt.Sprint(c)
				err = s.ObjectsSwap(store.WithEvents(ctx, e), []store.Swap{swapTo(o, fmt.Sprintf("%s/metadata/%05d.metadata.json", o.Location, c+1))})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	seen := map[string]bool{}
	next := map[string]int{}
	var after store.EventPos
	read := func() int {
		evs, err := s.ListEvents(ctx, store.EventFilter{After: after}, 7)
		require.NoError(t, err)
		for _, e := range evs {
			require.False(t, seen[e.ID], "event %s listed twice", e.ID)
			seen[e.ID] = true
			require.Equal(t, fmt.Sprint(next[e.Name]), e.RequestID, "table %s's events in commit order", e.Name)
			next[e.Name]++
			after = e.Pos
		}
		return len(evs)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			read()
		}
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(seen) < tables*commits && time.Now().Before(deadline); {
		if read() == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	require.Len(t, seen, tables*commits)
}
