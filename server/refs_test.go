package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// countingStore counts the reads that fetch a metadata document.
type countingStore struct {
	store.Store
	full, refs atomic.Int64
}

func (c *countingStore) ObjectGet(ctx context.Context, ref store.ObjectRef) (*store.Object, error) {
	c.full.Add(1)
	return c.Store.ObjectGet(ctx, ref)
}

func (c *countingStore) ObjectGetRefs(ctx context.Context, ref store.ObjectRef) (*store.Object, error) {
	c.refs.Add(1)
	return c.Store.ObjectGetRefs(ctx, ref)
}

// setupCounting is setup over a countingStore.
func setupCounting(t *testing.T, backend string) (*bundle, *countingStore) {
	t.Helper()
	cs := &countingStore{Store: openStore(t, backend)}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(cs, storage.NewProvider(), service.Options{VerifyMetadataOnLoad: true, Logger: quiet})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	_, err := svc.CreateWarehouse(context.Background(), "wh", loc, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: loc, store: cs, client: hs.Client()}, cs
}

// snapshotIDs returns the sorted snapshot ids of a loadTable answer.
func snapshotIDs(t *testing.T, r response) []int64 {
	t.Helper()
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		Metadata struct {
			Snapshots []struct {
				ID int64 `json:"snapshot-id"`
			} `json:"snapshots"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	ids := []int64{}
	for _, s := range res.Metadata.Snapshots {
		ids = append(ids, s.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// TestRefsLoadReadsOnlyRefs: a snapshots=refs load is answered from the
// refs-only document stored with the pointer (never the full one), kept
// current by register and by commits (a new tag adds its snapshot); a row
// without one (written before the column existed) falls back to filtering
// the full document; a 304 reads no document at all.
func TestRefsLoadReadsOnlyRefs(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, cs := setupCounting(t, backend)
			b.createNamespace(t, "ns")
			metaLoc := manySnapshotsMetadata(t, strings.TrimPrefix(b.warehouse, "file://"), 50)
			r := b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "big", "metadata-location": metaLoc})
			require.Equal(t, 200, r.status, "%s", r.body)
			const path = "/v1/wh/namespaces/ns/tables/big"

			full0 := cs.full.Load()
			refs := b.do(t, "GET", path+"?snapshots=refs", nil)
			require.Equal(t, []int64{50}, snapshotIDs(t, refs), "only the head of main")
			require.Equal(t, full0, cs.full.Load(), "a refs load does not read the full document")
			require.Len(t, snapshotIDs(t, b.do(t, "GET", path, nil)), 50)

			// A commit keeps the stored refs document current.
			r = b.do(t, "POST", path, map[string]any{"requirements": []any{}, "updates": []any{map[string]any{
				"action": "set-snapshot-ref", "ref-name": "old", "type": "tag", "snapshot-id": 7}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			full0 = cs.full.Load()
			refs = b.do(t, "GET", path+"?snapshots=refs", nil)
			require.Equal(t, []int64{7, 50}, snapshotIDs(t, refs), "a tag's snapshot is kept")
			require.Equal(t, full0, cs.full.Load())
			got, err := cs.Store.ObjectGetRefs(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "big", Kind: store.KindTable})
			require.NoError(t, err)
			require.True(t, got.RefsOnly, "the commit stored a refs document")

			// 304 from the pointer alone.
			reads := cs.full.Load() + cs.refs.Load()
			r = b.do(t, "GET", path+"?snapshots=refs", nil, "If-None-Match", refs.header.Get("ETag"))
			require.Equal(t, 304, r.status)
			require.Equal(t, reads, cs.full.Load()+cs.refs.Load(), "a 304 reads no metadata document")

			// A row without a refs document: the full one is filtered.
			cur := b.do(t, "GET", path, nil).json(t)["metadata-location"].(string)
			obj, err := cs.Store.ObjectGet(context.Background(), got.Ref())
			require.NoError(t, err)
			copied, err := os.ReadFile(strings.TrimPrefix(cur, "file://"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(strings.TrimPrefix(cur, "file://")+".copy", copied, 0o644))
			require.NoError(t, cs.Store.ObjectsSwap(context.Background(), []store.Swap{{ObjectID: obj.ID,
				ExpectedMetadataLocation: cur, NewMetadataLocation: cur + ".copy", NewMetadata: obj.Metadata, NewFormatVersion: obj.FormatVersion}}))
			require.Equal(t, []int64{7, 50}, snapshotIDs(t, b.do(t, "GET", path+"?snapshots=refs", nil)), "fallback filters")

			// A table whose snapshots all head a ref stores one copy and
			// still answers refs loads from it.
			require.Equal(t, 200, b.createTable(t, "ns", "small", nil).status)
			got, err = cs.Store.ObjectGetRefs(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "small", Kind: store.KindTable})
			require.NoError(t, err)
			require.True(t, got.RefsOnly)
			require.Equal(t, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/small", nil).json(t)["metadata"],
				b.do(t, "GET", "/v1/wh/namespaces/ns/tables/small?snapshots=refs", nil).json(t)["metadata"])
		})
	}
}
