package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// setupEvents starts a catalog recording change events (retention one
// hour) with warehouse wh, under the RBAC authorizer when rbac is set
// (callers named by X-Test-Principal), else allow-all.
func setupEvents(t *testing.T, backend string, rbac bool, events service.EventOptions) *bundle {
	return setupEventsWith(t, backend, rbac, events)
}

// setupEventsTB is setupEvents for benchmarks: allow-all, no sink.
func setupEventsTB(t testing.TB, backend string) *bundle {
	return setupEventsWith(t, backend, false, service.EventOptions{})
}

func setupEventsWith(t testing.TB, backend string, rbac bool, events service.EventOptions) *bundle {
	t.Helper()
	if events.Retention == 0 {
		events.Retention = time.Hour
	}
	return setupOptions(t, backend, rbac, service.Options{VerifyMetadataOnLoad: true, Events: events})
}

// setupOptions starts a catalog of opts (logging discarded) on a new store
// of backend with warehouse wh, under the RBAC authorizer when rbac is set
// (callers named by X-Test-Principal), else opts' authorizer.
func setupOptions(t testing.TB, backend string, rbac bool, opts service.Options) *bundle {
	t.Helper()
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Logger = quiet
	if rbac {
		opts.Authorizer = access.NewRBAC(st)
	}
	svc := service.New(st, storage.NewProvider(), opts)
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	local := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal})
	_, err := svc.CreateWarehouse(local, "wh", loc, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(withTestPrincipal(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client(), svc: svc}
}

type eventsPage struct {
	Token  string `json:"continuation-token"`
	Events []struct {
		ID        string            `json:"event-id"`
		RequestID string            `json:"request-id"`
		Count     int               `json:"request-event-count"`
		At        int64             `json:"timestamp-ms"`
		Actor     map[string]string `json:"actor"`
		Operation map[string]any    `json:"operation"`
	} `json:"events"`
}

func (b *bundle) events(t *testing.T, query map[string]any, headers ...string) eventsPage {
	t.Helper()
	r := b.do(t, "POST", "/v1/wh/events", query, headers...)
	require.Equal(t, 200, r.status, "%s", r.body)
	var p eventsPage
	require.NoError(t, json.Unmarshal(r.body, &p))
	return p
}

// eventsN is b.events once the page holds at least n events. On Postgres
// an event is listed once every older transaction on the server has ended,
// and other packages' tests share the server: a commit that answered may
// take a moment to show.
func (b *bundle) eventsN(t *testing.T, query map[string]any, n int, headers ...string) eventsPage {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p := b.events(t, query, headers...)
		if len(p.Events) >= n || time.Now().After(deadline) {
			return p
		}
	}
}

func opTypes(p eventsPage) []string {
	out := []string{}
	for _, e := range p.Events {
		out = append(out, e.Operation["operation-type"].(string))
	}
	return out
}

// TestEventsPull: every committed change of a warehouse is an event in
// commit order, in the REST events proposal's shape; a refused commit has
// none; secrets and outside paths are withheld; paging and filters work.
func TestEventsPull(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupEvents(t, backend, false, service.EventOptions{})
			require.Empty(t, b.events(t, map[string]any{}).Events)
			b.createNamespace(t, "ns")
			require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
			r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{},
				"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{
					"owner": "ml", "s3.secret-access-key": "hunter2", "elsewhere": "s3://other-bucket/x"}}}}, "X-Request-ID", "req-commit-1")
			require.Equal(t, 200, r.status, "%s", r.body)
			// A failed requirement commits nothing and records nothing.
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{
				"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}},
				"updates":      []any{map[string]any{"action": "set-properties", "updates": map[string]string{"x": "y"}}}})
			require.Equal(t, 409, r.status, "%s", r.body)
			require.Equal(t, 204, b.do(t, "POST", "/v1/wh/tables/rename", map[string]any{
				"source": map[string]any{"namespace": []string{"ns"}, "name": "t"}, "destination": map[string]any{"namespace": []string{"ns"}, "name": "t2"}}).status)
			require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t2", nil).status)
			require.Equal(t, 200, b.do(t, "POST", "/v1/wh/namespaces/ns/properties", map[string]any{"updates": map[string]string{"a": "1"}, "removals": []string{"gone"}}).status)
			b.createNamespace(t, "other")
			require.Equal(t, 200, b.createTable(t, "other", "u", nil).status)

			all := b.eventsN(t, map[string]any{}, 8)
			require.Equal(t, []string{"create-namespace", "create-table", "update-table", "rename-table", "drop-table",
				"update-namespace-properties", "create-namespace", "create-table"}, opTypes(all))
			create, update, rename, drop, props := all.Events[1], all.Events[2], all.Events[3], all.Events[4], all.Events[5]
			uuid := create.Operation["table-uuid"].(string)
			require.NotEmpty(t, uuid)
			require.Equal(t, map[string]any{"namespace": []any{"ns"}, "name": "t"}, create.Operation["identifier"])
			require.NotEmpty(t, create.Operation["updates"], "a create names its updates")
			require.Equal(t, uuid, update.Operation["table-uuid"])
			require.Equal(t, "req-commit-1", update.RequestID)
			require.Equal(t, 1, update.Count)
			require.Equal(t, map[string]string{"id": "anonymous:anonymous"}, update.Actor)
			set := update.Operation["updates"].([]any)[0].(map[string]any)["updates"].(map[string]any)
			require.Equal(t, "ml", set["owner"])
			require.Equal(t, "<redacted>", set["s3.secret-access-key"], "a secret never reaches an event")
			require.Equal(t, "<redacted>", set["elsewhere"], "a path outside the table never reaches an event")
			require.NotContains(t, string(b.do(t, "POST", "/v1/wh/events", map[string]any{}).body), "hunter2")
			require.Equal(t, map[string]any{"namespace": []any{"ns"}, "name": "t"}, rename.Operation["source"])
			require.Equal(t, map[string]any{"namespace": []any{"ns"}, "name": "t2"}, rename.Operation["destination"])
			require.Equal(t, uuid, rename.Operation["table-uuid"])
			require.Equal(t, uuid, drop.Operation["table-uuid"])
			require.Equal(t, false, drop.Operation["purge"])
			require.Equal(t, []any{"a"}, props.Operation["updated"])
			require.Equal(t, []any{"gone"}, props.Operation["missing"])
			seen := map[string]bool{}
			for i, e := range all.Events {
				require.False(t, seen[e.ID])
				seen[e.ID] = true
				if i > 0 {
					require.GreaterOrEqual(t, e.At, all.Events[i-1].At)
				}
			}

			// Pages of two follow each other to the same list; the last
			// token answers no event until something new commits.
			var paged []string
			tok := ""
			for range 10 {
				p := b.events(t, map[string]any{"continuation-token": tok, "page-size": 2})
				require.LessOrEqual(t, len(p.Events), 2)
				paged = append(paged, opTypes(p)...)
				require.NotEmpty(t, p.Token)
				tok = p.Token
				if len(p.Events) == 0 {
					break
				}
			}
			require.Equal(t, opTypes(all), paged)
			require.Empty(t, b.events(t, map[string]any{"continuation-token": tok}).Events)
			b.createNamespace(t, "later")
			require.Equal(t, []string{"create-namespace"}, opTypes(b.eventsN(t, map[string]any{"continuation-token": tok}, 1)))

			// Filters.
			require.Equal(t, []string{"update-table"}, opTypes(b.events(t, map[string]any{"operation-types": []string{"update-table"}})))
			require.Equal(t, []string{"create-namespace", "create-table"}, opTypes(b.events(t, map[string]any{"catalog-objects-by-name": [][]string{{"other"}}})))
			require.Equal(t, []string{"create-table"}, opTypes(b.events(t, map[string]any{"catalog-objects-by-name": [][]string{{"other", "u"}}, "object-types": []string{"table"}})))
			require.Equal(t, []string{"create-table", "update-table", "rename-table", "drop-table"}, opTypes(b.events(t, map[string]any{"catalog-objects-by-uuid": []string{uuid}})))
			require.Len(t, b.events(t, map[string]any{"since-timestamp-ms": time.Now().Add(time.Hour).UnixMilli()}).Events, 0)

			r = b.do(t, "POST", "/v1/wh/events", map[string]any{"continuation-token": "not-ours"})
			require.Equal(t, 400, r.status, "%s", r.body)
			typ, _ := r.errorOf(t)
			require.Equal(t, "BadRequestException", typ)
			require.Equal(t, 404, b.do(t, "POST", "/v1/nowh/events", map[string]any{}).status)
			cfg := b.do(t, "GET", "/v1/config?warehouse=wh", nil).json(t)
			require.Contains(t, cfg["endpoints"], "POST /v1/{prefix}/events")
		})
	}
}

// TestEventsOff: with a zero retention nothing is recorded and the route
// answers 404 with the reason.
func TestEventsOff(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	r := b.do(t, "POST", "/v1/wh/events", map[string]any{})
	require.Equal(t, 404, r.status, "%s", r.body)
	_, msg := r.errorOf(t)
	require.Contains(t, msg, "not enabled")
}

// TestEventsAuthorized: a caller sees the events of the objects it may
// read and no other, while the token still moves past the hidden ones.
func TestEventsAuthorized(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupEvents(t, backend, true, service.EventOptions{})
			as := func(who, method, path string, body any) response {
				return b.do(t, method, path, body, "X-Test-Principal", who)
			}
			for _, ns := range []string{"sales", "hr"} {
				require.Equal(t, 200, as("local", "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{ns}}).status)
				require.Equal(t, 200, as("local", "POST", "/v1/wh/namespaces/"+ns+"/tables", map[string]any{"name": "t", "schema": jsonRaw(testSchema)}).status)
			}
			require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "readers"}).status)
			for _, priv := range []string{"table-read-metadata", "namespace-list"} {
				require.Equal(t, 204, as("local", "POST", "/management/v1/roles/readers/grants", map[string]any{
					"privilege": priv, "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"sales"}}}).status)
			}
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/readers/assignments", map[string]any{"kind": "builtin", "name": "alice"}).status)

			admin := b.eventsN(t, map[string]any{}, 4, "X-Test-Principal", "local")
			require.Len(t, admin.Events, 4)
			alice := b.events(t, map[string]any{}, "X-Test-Principal", "builtin:alice")
			require.Equal(t, []string{"create-namespace", "create-table"}, opTypes(alice))
			for _, e := range alice.Events {
				require.NotContains(t, strings.ToLower(string(mustJSON(e.Operation))), "hr")
			}
			require.Equal(t, admin.Token, alice.Token, "the token moves past events the caller cannot see")
			require.Empty(t, b.events(t, map[string]any{}, "X-Test-Principal", "builtin:bob").Events)
		})
	}
}

// TestEventsPrunedAreGone: the prune job removes events past the retention
// and a continuation-token from before them is answered 410 (its reader
// would otherwise skip events without knowing); a fresh query works.
func TestEventsPrunedAreGone(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupEvents(t, backend, false, service.EventOptions{Retention: 50 * time.Millisecond})
			b.createNamespace(t, "a")
			first := b.eventsN(t, map[string]any{"page-size": 1}, 1)
			b.createNamespace(t, "b")
			time.Sleep(100 * time.Millisecond)
			b.createNamespace(t, "c")
			// The hand-off happens inside the retention: a token read now is
			// still good.
			jobs := b.svc.JobHandlers()
			require.Contains(t, jobs, service.JobPruneEvents)
			time.Sleep(60 * time.Millisecond)
			err := jobs[service.JobPruneEvents](context.Background(), &store.JobInfo{Kind: service.JobPruneEvents})
			var snooze *store.JobSnooze
			require.ErrorAs(t, err, &snooze, "the prune job recurs")
			r := b.do(t, "POST", "/v1/wh/events", map[string]any{"continuation-token": first.Token})
			require.Equal(t, 410, r.status, "%s", r.body)
			typ, msg := r.errorOf(t)
			require.Equal(t, "GoneException", typ)
			require.Contains(t, msg, "retention")
			require.Empty(t, b.events(t, map[string]any{}).Events, "all three are past 50 ms now")
			b.createNamespace(t, "d")
			require.Equal(t, []string{"create-namespace"}, opTypes(b.eventsN(t, map[string]any{}, 1)))
		})
	}
}

// TestEventsViews: a view's create, replace, rename and drop are events
// with its view-uuid; a create names the updates that build the view.
func TestEventsViews(t *testing.T) {
	b := setupEvents(t, "sqlite", false, service.EventOptions{})
	b.createNamespace(t, "ns")
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/views", viewBody("v"))
	require.Equal(t, 200, r.status, "%s", r.body)
	uuid := r.json(t)["metadata"].(map[string]any)["view-uuid"].(string)
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/views/v", map[string]any{"updates": []any{
		map[string]any{"action": "set-properties", "updates": map[string]string{"comment": "x", "session-token": "s3cr3t"}}}})
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, 204, b.do(t, "POST", "/v1/wh/views/rename", map[string]any{
		"source": map[string]any{"namespace": []string{"ns"}, "name": "v"}, "destination": map[string]any{"namespace": []string{"ns"}, "name": "w"}}).status)
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/views/w", nil).status)

	p := b.events(t, map[string]any{"object-types": []string{"view"}})
	require.Equal(t, []string{"create-view", "update-view", "rename-view", "drop-view"}, opTypes(p))
	for _, e := range p.Events {
		require.Equal(t, uuid, e.Operation["view-uuid"], "%v", e.Operation)
	}
	var actions []string
	for _, u := range p.Events[0].Operation["updates"].([]any) {
		actions = append(actions, u.(map[string]any)["action"].(string))
	}
	require.Contains(t, actions, "add-view-version")
	require.NotContains(t, string(mustJSON(p.Events[1].Operation)), "s3cr3t")
}

// TestEventsFunctions: a function's create and drop are events with its
// function-uuid, read by a caller holding view-read on its namespace (what
// loadFunction needs) and by no one else.
func TestEventsFunctions(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupEvents(t, backend, true, service.EventOptions{})
			as := func(who, method, path string, body any) response {
				return b.do(t, method, path, body, "X-Test-Principal", who)
			}
			require.Equal(t, 200, as("local", "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"fx"}}).status)
			fns := "/management/v1/warehouses/wh/namespaces/fx/functions"
			r := as("local", "POST", fns, functionBody("add_one"))
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 204, as("local", "DELETE", fns+"/add_one", nil).status)

			ops := map[string]any{"operation-types": []string{changeevents.CreateFunction, changeevents.DropFunction}}
			p := b.eventsN(t, ops, 2, "X-Test-Principal", "local")
			require.Equal(t, []string{changeevents.CreateFunction, changeevents.DropFunction}, opTypes(p))
			for _, e := range p.Events {
				require.Equal(t, "42fd3f91-bc10-41c1-8a52-92b57dd0a9b2", e.Operation["function-uuid"], "%v", e.Operation)
				require.Equal(t, map[string]any{"namespace": []any{"fx"}, "name": "add_one"}, e.Operation["identifier"])
			}

			require.Empty(t, b.events(t, ops, "X-Test-Principal", "builtin:bob").Events, "no grant, no function events")
			require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "fnreaders"}).status)
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/fnreaders/grants", map[string]any{
				"privilege": "view-read", "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"fx"}}}).status)
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/fnreaders/assignments", map[string]any{"kind": "builtin", "name": "alice"}).status)
			require.Len(t, b.events(t, ops, "X-Test-Principal", "builtin:alice").Events, 2)
		})
	}
}

// TestEventsTransaction: a multi-table transaction writes one event per
// table, sharing its request id, each counting both, also when a page
// holds only one of them.
func TestEventsTransaction(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupEvents(t, backend, false, service.EventOptions{})
			b.createNamespace(t, "ns")
			for _, n := range []string{"a", "b"} {
				require.Equal(t, 200, b.createTable(t, "ns", n, nil).status)
			}
			tok := b.eventsN(t, map[string]any{}, 3).Token
			change := func(n string) map[string]any {
				return map[string]any{"identifier": map[string]any{"namespace": []string{"ns"}, "name": n}, "requirements": []any{},
					"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"k": n}}}}
			}
			r := b.do(t, "POST", "/v1/wh/transactions/commit", map[string]any{"table-changes": []any{change("a"), change("b")}}, "X-Request-ID", "tx-1")
			require.Equal(t, 204, r.status, "%s", r.body)
			first := b.eventsN(t, map[string]any{"continuation-token": tok, "page-size": 1}, 1)
			second := b.eventsN(t, map[string]any{"continuation-token": first.Token, "page-size": 1}, 1)
			require.Len(t, first.Events, 1)
			require.Len(t, second.Events, 1)
			for _, e := range []string{first.Events[0].RequestID, second.Events[0].RequestID} {
				require.Equal(t, "tx-1", e)
			}
			require.Equal(t, 2, first.Events[0].Count)
			require.Equal(t, 2, second.Events[0].Count)
			names := []any{first.Events[0].Operation["identifier"].(map[string]any)["name"], second.Events[0].Operation["identifier"].(map[string]any)["name"]}
			require.ElementsMatch(t, []any{"a", "b"}, names)
		})
	}
}
