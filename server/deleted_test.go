package server_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

type deletedPage struct {
	Deleted []struct {
		ID        string   `json:"id"`
		Kind      string   `json:"kind"`
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
		ExpiresAt string   `json:"expires-at"`
		Purge     bool     `json:"purge-requested"`
	} `json:"deleted"`
	Next *string `json:"next-page-token"`
}

func (b *bundle) deleted(t *testing.T) deletedPage {
	t.Helper()
	r := b.do(t, "GET", "/management/v1/warehouses/wh/deleted", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var p deletedPage
	require.NoError(t, json.Unmarshal(r.body, &p))
	return p
}

// TestSoftDeleteAndUndrop: in a warehouse with the soft profile a dropped
// table and view leave loads and lists, free their names and are listed as
// deleted; undrop brings the table back with its data (under a new name
// when the old one was taken); a drop with purge keeps the files until the
// retention ends, when its job purges them and forgets the table.
func TestSoftDeleteAndUndrop(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testSoftDelete(t, backend) })
	}
}

func testSoftDelete(t *testing.T, backend string) {
	{
		b := setupTB(t, backend, map[string]string{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": "3600000"})
		b.createNamespace(t, "ns")
		r := b.createTable(t, "ns", "t", nil)
		require.Equal(t, 200, r.status)
		meta := r.json(t)["metadata-location"].(string)
		require.Equal(t, 200, b.do(t, "POST", "/v1/wh/namespaces/ns/views", map[string]any{"name": "v", "schema": rawJSON(testSchema),
			"view-version": map[string]any{"version-id": 1, "timestamp-ms": time.Now().UnixMilli(), "schema-id": 0, "summary": map[string]string{},
				"representations": []any{map[string]any{"type": "sql", "sql": "select 1", "dialect": "spark"}}, "default-namespace": []string{"ns"}}}).status)

		require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t", nil).status)
		// Drops in one millisecond tie on deleted_at and then order by
		// their random ids: the view is dropped a millisecond later so
		// that "newest first" has one answer.
		time.Sleep(2 * time.Millisecond)
		require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/views/v", nil).status)
		require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil).status)
		require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/views/v", nil).status)
		require.NotContains(t, string(b.do(t, "GET", "/v1/wh/namespaces/ns/tables", nil).body), `"t"`)
		p := b.deleted(t)
		require.Len(t, p.Deleted, 2)
		require.Equal(t, "view", p.Deleted[0].Kind, "newest first")
		tableID := p.Deleted[1].ID
		require.Equal(t, "t", p.Deleted[1].Name)
		require.False(t, p.Deleted[1].Purge)
		require.FileExists(t, strings.TrimPrefix(meta, "file://"), "a soft drop deletes nothing")

		// The name is free; undrop under it fails, under a new one works.
		require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
		undrop := "/management/v1/warehouses/wh/deleted/" + tableID + "/undrop"
		r = b.do(t, "POST", undrop, map[string]any{})
		require.Equal(t, 409, r.status, "%s", r.body)
		r = b.do(t, "POST", undrop, map[string]any{"namespace": []string{"ns"}, "name": "t_back"})
		require.Equal(t, 200, r.status, "%s", r.body)
		require.JSONEq(t, `{"kind":"table","namespace":["ns"],"name":"t_back"}`, string(r.body))
		back := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t_back", nil)
		require.Equal(t, 200, back.status)
		require.Equal(t, meta, back.json(t)["metadata-location"], "the same table, as it was")
		require.Equal(t, 404, b.do(t, "POST", undrop, map[string]any{}).status, "undropped once")
		require.Len(t, b.deleted(t).Deleted, 1)

		// A drop with purge: the job waits for the retention.
		require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t_back?purgeRequested=true", nil).status)
		p = b.deleted(t)
		require.True(t, p.Deleted[0].Purge)
		require.Len(t, b.jobs(t, "?kind=expire-deleted&state=scheduled").Jobs, 3, "one per soft drop, waiting for the retention")
		require.FileExists(t, strings.TrimPrefix(meta, "file://"))
	}

	// A warehouse whose retention is over at once: the job purges and
	// forgets the table; undrop is too late.
	b := setup(t, backend)
	loc := "file://" + t.TempDir()
	r := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": "brief", "location": loc,
		"properties": map[string]string{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": "0"}})
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, 200, b.do(t, "POST", "/v1/brief/namespaces", map[string]any{"namespace": []string{"ns"}}).status)
	r = b.do(t, "POST", "/v1/brief/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)})
	require.Equal(t, 200, r.status, "%s", r.body)
	meta := strings.TrimPrefix(r.json(t)["metadata-location"].(string), "file://")
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/brief/namespaces/ns/tables/t?purgeRequested=true", nil).status)
	var p deletedPage
	require.NoError(t, json.Unmarshal(b.do(t, "GET", "/management/v1/warehouses/brief/deleted", nil).body, &p))
	require.Len(t, p.Deleted, 1)
	require.Equal(t, 404, b.do(t, "POST", "/management/v1/warehouses/brief/deleted/"+p.Deleted[0].ID+"/undrop", map[string]any{}).status,
		"the retention is over")
	b.drainJobs(t)
	_, err := os.Stat(meta)
	require.True(t, os.IsNotExist(err), "purged once the retention ended")
	require.NoError(t, json.Unmarshal(b.do(t, "GET", "/management/v1/warehouses/brief/deleted", nil).body, &p))
	require.Empty(t, p.Deleted, "and forgotten")
	jobs, _, err := b.store.ListJobs(context.Background(), store.JobFilter{Kind: "expire-deleted", States: []string{"completed"}}, store.Page{Size: 5})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
}

// TestDeletionProfileChecked: a warehouse is refused a deletion profile
// other than hard or soft, or a retention that is not milliseconds, since
// a typo would silently make every drop final.
func TestDeletionProfileChecked(t *testing.T) {
	b := setup(t, "sqlite")
	for _, props := range []map[string]string{
		{"lakehold.deletion-profile": "Soft"},
		{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": "7d"},
		{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": "-1"},
	} {
		r := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": "w2", "location": "file://" + t.TempDir(), "properties": props})
		require.Equal(t, 400, r.status, "%v: %s", props, r.body)
		_, msg := r.errorOf(t)
		require.Contains(t, msg, "lakehold.deletion-")
	}
	r := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": "w2", "location": "file://" + t.TempDir(),
		"properties": map[string]string{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": "0"}})
	require.Less(t, r.status, 300, "%s", r.body)
}
