package server_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func setProps(kv ...string) map[string]any {
	up := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		up[kv[i]] = kv[i+1]
	}
	return map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "set-properties", "updates": up}}}
}

func tableProps(t *testing.T, b *bundle, ns, name string) map[string]string {
	t.Helper()
	r := b.do(t, "GET", "/v1/wh/namespaces/"+ns+"/tables/"+name, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		Metadata struct {
			Properties map[string]string `json:"properties"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	return res.Metadata.Properties
}

// TestConcurrentCommits: 16 writers commit to one hot table and 16 writers
// to 16 tables. Only 200 or 409 may come back, and every 200 is visible in
// the final metadata (no lost update).
func TestConcurrentCommits(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "hot", nil).status)
			for i := 0; i < 16; i++ {
				require.Equal(t, 200, b.createTable(t, "ns", fmt.Sprintf("t%d", i), nil).status)
			}
			const writers = 16
			var wg sync.WaitGroup
			var mu sync.Mutex
			okHot := map[string]bool{}
			statuses := map[int]int{}
			for i := 0; i < writers; i++ {
				wg.Add(2)
				go func(i int) {
					defer wg.Done()
					key := fmt.Sprintf("w%d", i)
					r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/hot", setProps(key, "v"))
					mu.Lock()
					defer mu.Unlock()
					statuses[r.status]++
					if r.status == 200 {
						okHot[key] = true
					} else if r.status == 409 {
						typ, _ := r.errorOf(t)
						require.Equal(t, "CommitFailedException", typ)
					}
				}(i)
				go func(i int) {
					defer wg.Done()
					r := b.do(t, "POST", fmt.Sprintf("/v1/wh/namespaces/ns/tables/t%d", i), setProps("k", "v"))
					require.Equal(t, 200, r.status, "distinct tables never conflict: %s", r.body)
				}(i)
			}
			wg.Wait()
			for st := range statuses {
				require.Contains(t, []int{200, 409}, st, "only 200 or 409: %v", statuses)
			}
			require.NotEmpty(t, okHot)
			props := tableProps(t, b, "ns", "hot")
			for k := range okHot {
				require.Equal(t, "v", props[k], "committed update %s was lost", k)
			}
			for i := 0; i < writers; i++ {
				key := fmt.Sprintf("w%d", i)
				if !okHot[key] {
					require.NotContains(t, props, key, "a 409 must not have committed")
				}
			}
			t.Logf("hot table outcomes: %v", statuses)
		})
	}
}

// TestServerSideRebase: a commit built on a stale base whose requirements
// still hold lands on top of the concurrent change.
func TestServerSideRebase(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
	require.Equal(t, 200, b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("a", "1")).status)
	schemaUpdate := map[string]any{
		"requirements": []any{map[string]any{"type": "assert-current-schema-id", "current-schema-id": 0}},
		"updates": []any{
			map[string]any{"action": "add-schema", "schema": rawJSON(`{"type":"struct","schema-id":1,"fields":[
				{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"data","type":"string","required":false},
				{"id":3,"name":"extra","type":"int","required":false}]}`)},
			map[string]any{"action": "set-current-schema", "schema-id": -1},
		},
	}
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", schemaUpdate)
	require.Equal(t, 200, r.status, "%s", r.body)
	props := tableProps(t, b, "ns", "t")
	require.Equal(t, "1", props["a"])
}

// TestIdempotencyKey: a replayed commit returns the first outcome and
// commits nothing twice.
func TestIdempotencyKey(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
			key := "01890a5d-ac96-774b-bcce-b302099a8057"
			first := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("x", "1"), "Idempotency-Key", key)
			require.Equal(t, 200, first.status)
			second := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("x", "1"), "Idempotency-Key", key)
			require.Equal(t, 200, second.status)
			require.Equal(t, "true", second.header.Get("Idempotent-Replayed"))
			require.JSONEq(t, string(first.body), string(second.body))
			r := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil)
			var res struct {
				Metadata struct {
					MetadataLog []any `json:"metadata-log"`
				} `json:"metadata"`
			}
			require.NoError(t, json.Unmarshal(r.body, &res))
			require.Len(t, res.Metadata.MetadataLog, 1, "exactly one commit landed")

			// A deterministic 4xx is replayed as well.
			dupNS := map[string]any{"namespace": []string{"ns"}}
			e1 := b.do(t, "POST", "/v1/wh/namespaces", dupNS, "Idempotency-Key", "k-409")
			e2 := b.do(t, "POST", "/v1/wh/namespaces", dupNS, "Idempotency-Key", "k-409")
			require.Equal(t, 409, e1.status)
			require.Equal(t, 409, e2.status)
			require.Equal(t, "true", e2.header.Get("Idempotent-Replayed"))
			// Reusing a key for another operation is refused.
			other := b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"other"}}, "Idempotency-Key", key)
			require.Equal(t, 422, other.status)
		})
	}
}

// TestETagRevalidation: If-None-Match with the current tag gives 304 and no
// body; after a commit the old tag no longer matches.
func TestETagRevalidation(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	created := b.createTable(t, "ns", "t", nil)
	require.Equal(t, 200, created.status)
	tag := created.header.Get("ETag")
	require.NotEmpty(t, tag)
	r := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "If-None-Match", tag)
	require.Equal(t, 304, r.status)
	require.Empty(t, r.body)
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil).status, "no 304 without If-None-Match")
	c := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("a", "b"))
	require.Equal(t, 200, c.status)
	require.NotEqual(t, tag, c.header.Get("ETag"))
	r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "If-None-Match", tag)
	require.Equal(t, 200, r.status)
	require.Equal(t, c.header.Get("ETag"), r.header.Get("ETag"))
}

// TestStagedCreate: stage-create persists nothing; the assert-create commit
// creates the table.
func TestStagedCreate(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	staged := b.createTable(t, "ns", "s", map[string]any{"stage-create": true})
	require.Equal(t, 200, staged.status, "%s", staged.body)
	require.NotContains(t, staged.json(t), "metadata-location")
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/s", nil).status)
	var st struct {
		Metadata map[string]any `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(staged.body, &st))
	commit := map[string]any{
		"requirements": []any{map[string]any{"type": "assert-create"}},
		"updates": []any{
			map[string]any{"action": "assign-uuid", "uuid": st.Metadata["table-uuid"]},
			map[string]any{"action": "upgrade-format-version", "format-version": 2},
			map[string]any{"action": "add-schema", "schema": rawJSON(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`)},
			map[string]any{"action": "set-current-schema", "schema-id": -1},
			map[string]any{"action": "add-spec", "spec": map[string]any{"spec-id": 0, "fields": []any{}}},
			map[string]any{"action": "set-default-spec", "spec-id": -1},
			map[string]any{"action": "add-sort-order", "sort-order": map[string]any{"order-id": 0, "fields": []any{}}},
			map[string]any{"action": "set-default-sort-order", "sort-order-id": -1},
			map[string]any{"action": "set-location", "location": st.Metadata["location"]},
			map[string]any{"action": "set-properties", "updates": map[string]string{"created": "by-commit"}},
		},
	}
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/s", commit)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, "by-commit", tableProps(t, b, "ns", "s")["created"])
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/s", commit)
	require.Equal(t, 409, r.status)
	_, msg := r.errorOf(t)
	require.Equal(t, "Requirement failed: table already exists", msg)
}

// TestMultiTableTransaction: all changes land, or none.
func TestMultiTableTransaction(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "a", nil).status)
			require.Equal(t, 200, b.createTable(t, "ns", "b", nil).status)
			change := func(name string, reqs []any) map[string]any {
				c := setProps("tx", name)
				c["identifier"] = map[string]any{"namespace": []string{"ns"}, "name": name}
				c["requirements"] = reqs
				return c
			}
			bad := []any{map[string]any{"type": "assert-current-schema-id", "current-schema-id": 9}}
			r := b.do(t, "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{change("a", []any{}), change("b", bad)}})
			require.Equal(t, 409, r.status)
			require.NotContains(t, tableProps(t, b, "ns", "a"), "tx", "a failed transaction changes nothing")
			r = b.do(t, "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{change("a", []any{}), change("b", []any{})}})
			require.Equal(t, 204, r.status, "%s", r.body)
			require.Equal(t, "a", tableProps(t, b, "ns", "a")["tx"])
			require.Equal(t, "b", tableProps(t, b, "ns", "b")["tx"])
			r = b.do(t, "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{change("missing", []any{})}})
			require.Equal(t, 404, r.status)
		})
	}
}

// TestRenameAcrossNamespaces keeps metadata and location, and frees the old
// name for a new table in its own (non-overlapping) location.
func TestRenameAcrossNamespaces(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "a")
	b.createNamespace(t, "b")
	first := b.createTable(t, "a", "t", nil)
	require.Equal(t, 200, first.status)
	r := b.do(t, "POST", "/v1/wh/tables/rename", map[string]any{
		"source": map[string]any{"namespace": []string{"a"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"b"}, "name": "t2"}})
	require.Equal(t, 204, r.status, "%s", r.body)
	moved := b.do(t, "GET", "/v1/wh/namespaces/b/tables/t2", nil)
	require.Equal(t, 200, moved.status)
	require.Equal(t, first.json(t)["metadata-location"], moved.json(t)["metadata-location"])
	require.Equal(t, 200, b.createTable(t, "a", "t", nil).status, "the old name is free and gets its own location")
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/b/tables/t2?purgeRequested=True", nil).status)
	b.drainJobs(t)
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/a/tables/t", nil).status, "purging the renamed table leaves the new one intact")
}

// TestCreateByCommitSchemaLast is the create commit DuckDB sends: the
// set-current-schema update comes after the sort order (regression).
func TestCreateByCommitSchemaLast(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "dd")
	body := rawJSON(`{"requirements":[{"type":"assert-create"}],"updates":[
	 {"action":"assign-uuid","uuid":"d48e31e8-f234-4221-9ada-ab4973716675"},
	 {"action":"upgrade-format-version","format-version":2},
	 {"action":"add-schema","last-column-id":2,"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"label","required":false,"type":"string"}],"identifier-field-ids":[]}},
	 {"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":0},
	 {"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":0},
	 {"action":"set-properties","updates":{}},{"action":"set-current-schema","schema-id":0}],
	 "identifier":{"name":"points","namespace":["dd"]}}`)
	r := b.do(t, "POST", "/v1/wh/namespaces/dd/tables/points", body)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, "d48e31e8-f234-4221-9ada-ab4973716675", r.json(t)["metadata"].(map[string]any)["table-uuid"])
}

// TestCreateWithZeroBasedFieldIDs is the create request Spark sends: field
// ids from 0 and a partition on field 0 (regression: the spec failed to
// decode before the ids were made fresh).
func TestCreateWithZeroBasedFieldIDs(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "sp")
	r := b.createTable(t, "sp", "t", map[string]any{
		"schema":         rawJSON(`{"type":"struct","schema-id":0,"fields":[{"id":0,"name":"id","type":"long","required":false},{"id":1,"name":"name","type":"string","required":false}]}`),
		"partition-spec": rawJSON(`{"spec-id":0,"fields":[{"source-id":0,"field-id":1000,"name":"id_bucket","transform":"bucket[4]"}]}`),
		"write-order":    rawJSON(`{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}`),
	})
	require.Equal(t, 200, r.status, "%s", r.body)
	var res struct {
		Metadata struct {
			Specs []struct {
				Fields []struct {
					SourceID int `json:"source-id"`
				} `json:"fields"`
			} `json:"partition-specs"`
			Orders []struct {
				Fields []struct {
					SourceID int `json:"source-id"`
				} `json:"fields"`
			} `json:"sort-orders"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Equal(t, 1, res.Metadata.Specs[0].Fields[0].SourceID, "id is field 1 after fresh assignment")
	last := res.Metadata.Orders[len(res.Metadata.Orders)-1]
	require.Equal(t, 2, last.Fields[0].SourceID, "name is field 2 after fresh assignment")
}
