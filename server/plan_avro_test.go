package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanV2TableAndConfig: /v1/config advertises scan planning, and a
// format v2 table is planned (an empty table: no tasks). The planner
// itself is tested in the service package.
func TestPlanV2TableAndConfig(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			cfg := b.do(t, "GET", "/v1/config?warehouse=wh", nil)
			require.Equal(t, 200, cfg.status)
			require.Contains(t, cfg.json(t)["endpoints"], "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan")

			require.Equal(t, 200, b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}).status)
			schema := map[string]any{"type": "struct", "schema-id": 0, "fields": []any{
				map[string]any{"id": 1, "name": "id", "type": "long", "required": true}}}
			created := b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": schema,
				"properties": map[string]string{"format-version": "2"}})
			require.Equal(t, 200, created.status, "%s", created.body)

			plan := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/plan", map[string]any{"select": []string{"id"}})
			require.Equal(t, 200, plan.status, "%s", plan.body)
			m := plan.json(t)
			require.Equal(t, "completed", m["status"])
			require.NotEmpty(t, m["plan-id"])
			require.Empty(t, m["file-scan-tasks"])

			bad := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/plan", map[string]any{"filter": map[string]any{"type": "eq", "term": "nope", "value": 1}})
			require.Equal(t, 400, bad.status, "%s", bad.body)
			_, msg := bad.errorOf(t)
			require.Contains(t, msg, "Invalid filter")
			missing := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/plan", map[string]any{"snapshot-id": 424242})
			require.Equal(t, 404, missing.status, "%s", missing.body)
		})
	}
}
