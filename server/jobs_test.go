package server_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type jobsPage struct {
	Jobs []struct {
		ID          int64          `json:"id"`
		Kind        string         `json:"kind"`
		State       string         `json:"state"`
		Attempt     int            `json:"attempt"`
		MaxAttempts int            `json:"max-attempts"`
		Warehouse   string         `json:"warehouse"`
		Table       string         `json:"table"`
		TableUUID   string         `json:"table-uuid"`
		Args        map[string]any `json:"args"`
		Errors      []any          `json:"errors"`
		AttemptedAt *string        `json:"attempted-at"`
	} `json:"jobs"`
	Next *string `json:"next-page-token"`
}

func (b *bundle) jobs(t *testing.T, query string) jobsPage {
	t.Helper()
	r := b.do(t, "GET", "/management/v1/jobs"+query, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var p jobsPage
	require.NoError(t, json.Unmarshal(r.body, &p))
	return p
}

// TestDropWithPurgeEnqueuesAJob: a drop with purge answers at once and
// leaves a purge-table job, listed at /management/v1/jobs, that a worker
// runs to completion; a drop without purge, or one that fails, enqueues
// nothing.
func TestDropWithPurgeEnqueuesAJob(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		b.createNamespace(t, "ns")
		for _, n := range []string{"keep", "gone"} {
			require.Equal(t, 200, b.createTable(t, "ns", n, nil).status)
		}
		loaded := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/gone", nil)
		meta := strings.TrimPrefix(loaded.json(t)["metadata-location"].(string), "file://")
		uuid := loaded.json(t)["metadata"].(map[string]any)["table-uuid"].(string)

		require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/keep", nil).status)
		require.Equal(t, 404, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/missing?purgeRequested=true", nil).status)
		require.Empty(t, b.jobs(t, "").Jobs, "a drop without purge and a failed drop enqueue nothing")

		require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/gone?purgeRequested=true", nil).status)
		p := b.jobs(t, "?warehouse=wh&table=ns.gone")
		require.Len(t, p.Jobs, 1)
		j := p.Jobs[0]
		require.Equal(t, "purge-table", j.Kind)
		require.Equal(t, "wh", j.Warehouse)
		require.Equal(t, "ns.gone", j.Table)
		require.Equal(t, uuid, j.TableUUID)
		require.Equal(t, "gone", j.Args["name"])
		require.Equal(t, 10, j.MaxAttempts)
		require.Empty(t, j.Errors)
		require.FileExists(t, meta, "nothing is purged before a worker runs the job")
		m := b.do(t, "GET", "/metrics", nil)
		require.Equal(t, 200, m.status)
		require.Contains(t, string(m.body), `catalog_jobs{state="available"} 1`)
		require.Contains(t, string(m.body), "catalog_jobs_oldest_waiting_seconds ")

		b.drainJobs(t)
		m = b.do(t, "GET", "/metrics", nil)
		require.Contains(t, string(m.body), `catalog_jobs{state="completed"} 1`)
		require.Contains(t, string(m.body), `catalog_jobs{state="available"} 0`)
		_, err := os.Stat(meta)
		require.True(t, os.IsNotExist(err), "the worker purged the table")
		done := b.jobs(t, "?state=completed&kind=purge-table")
		require.Len(t, done.Jobs, 1)
		require.Equal(t, 1, done.Jobs[0].Attempt)
		require.Empty(t, b.jobs(t, "?state=available&state=running").Jobs)
		require.Empty(t, b.jobs(t, "?warehouse=wh&table=ns.keep").Jobs)

		for _, bad := range []string{"?state=finished", "?table=ns.gone", "?warehouse=wh&table=gone", "?pageSize=0", "?pageSize=1001", "?pageToken=zzz"} {
			r := b.do(t, "GET", "/management/v1/jobs"+bad, nil)
			require.Equal(t, 400, r.status, "%s: %s", bad, r.body)
			typ, _ := r.errorOf(t)
			require.Equal(t, "BadRequestException", typ)
		}
	})
}
