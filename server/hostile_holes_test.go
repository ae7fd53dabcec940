package server_test

// Hostile-corpus cases for the holes of issue 47: an undrop that moved
// another namespace's table into the caller's, a rename event naming a
// source its reader may not see, event filter lists and page sizes
// without bounds. They run through the corpus's checks (hostileEnv.check)
// on a catalog with RBAC, change events and a soft-delete warehouse.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// holesEnv is the catalog the cases aim at: namespaces nsa and nsb;
// nsb.bt soft-dropped (deleted id bt); nsb.bmove renamed to nsa.from_b.
// Principals (X-Test-Principal builtin:NAME): mallory holds deleted-list
// and deleted-undrop on the warehouse and table-create, table-read-metadata
// and namespace-list on nsa only; carol also table-create on nsb; dave
// also table-drop on nsb and table-read-metadata on the warehouse.
type holesEnv struct {
	*hostileEnv
	bt string // the deleted id of nsb.bt
}

const holesLocal = "local"

func newHolesEnv(t *testing.T, backend string) *holesEnv {
	t.Helper()
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Authorizer: access.NewRBAC(st),
		Events: service.EventOptions{Retention: time.Hour}})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	local := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal})
	_, err := svc.CreateWarehouse(local, "wh", loc, map[string]string{"lakehold.deletion-profile": "soft"})
	require.NoError(t, err)
	hs := httptest.NewServer(withTestPrincipal(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client(), svc: svc}
	e := &holesEnv{hostileEnv: &hostileEnv{b: b, c: newCanary(t), wh: b.whDir()}}
	cwd, err := os.Getwd()
	require.NoError(t, err)
	e.forbidden = []string{e.wh, e.c.dir, filepath.Dir(e.wh), "/tmp/", cwd, "root:x"}

	as := func(method, path string, body any) response {
		r := b.do(t, method, path, body, "X-Test-Principal", holesLocal)
		require.Less(t, r.status, 300, "%s %s: %s", method, path, r.body)
		return r
	}
	for _, ns := range []string{"nsa", "nsb"} {
		as("POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{ns}})
	}
	for _, name := range []string{"bt", "bmove"} {
		as("POST", "/v1/wh/namespaces/nsb/tables", map[string]any{"name": name, "schema": jsonRaw(testSchema)})
	}
	as("DELETE", "/v1/wh/namespaces/nsb/tables/bt", nil)
	as("POST", "/v1/wh/tables/rename", map[string]any{"source": map[string]any{"namespace": []string{"nsb"}, "name": "bmove"},
		"destination": map[string]any{"namespace": []string{"nsa"}, "name": "from_b"}})
	// On Postgres an event shows once older transactions on the server
	// ended: wait for all six (two namespaces, two tables, drop, rename).
	require.Len(t, b.eventsN(t, map[string]any{}, 6, "X-Test-Principal", holesLocal).Events, 6)
	var p deletedPage
	require.NoError(t, json.Unmarshal(as("GET", "/management/v1/warehouses/wh/deleted", nil).body, &p))
	require.Len(t, p.Deleted, 1)
	e.bt = p.Deleted[0].ID

	grant := func(role, priv string, resource map[string]any) {
		as("POST", "/management/v1/roles/"+role+"/grants", map[string]any{"privilege": priv, "resource": resource})
	}
	whRes := map[string]any{"kind": "warehouse", "warehouse": "wh"}
	nsRes := func(ns string) map[string]any {
		return map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{ns}}
	}
	for _, who := range []string{"mallory", "carol", "dave"} {
		as("POST", "/management/v1/roles", map[string]any{"name": who})
		as("POST", "/management/v1/roles/"+who+"/assignments", map[string]any{"kind": "builtin", "name": who})
		grant(who, "deleted-list", whRes)
		grant(who, "deleted-undrop", whRes)
		for _, priv := range []string{"table-create", "table-read-metadata", "namespace-list"} {
			grant(who, priv, nsRes("nsa"))
		}
	}
	grant("carol", "table-create", nsRes("nsb"))
	grant("dave", "table-create", nsRes("nsb"))
	grant("dave", "table-drop", nsRes("nsb"))
	grant("dave", "table-read-metadata", whRes)
	return e
}

// TestHostileHoles runs the cases on both stores, in order: the undrop
// cases first (the last one undrops nsb.bt under a new name).
func TestHostileHoles(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newHolesEnv(t, backend)
			for _, c := range append(e.undropCases(t), e.eventCases(t)...) {
				t.Run(c.name, func(t *testing.T) { e.check(t, c) })
			}
			e.c.intact(t)
		})
	}
}

// undropCases: an undrop never lands outside the object's own namespace,
// needs the rights of a create there (and of a drop of the old name under
// a new name), and takes a new name only while the old one is taken.
func (e *holesEnv) undropCases(t *testing.T) []hostileCase {
	path := "/management/v1/warehouses/wh/deleted/" + e.bt + "/undrop"
	to := func(ns []string, name string) map[string]any { return map[string]any{"namespace": ns, "name": name} }
	undrop := func(name, who string, body any) hostileCase {
		return hostilePost(name, path, body).with("X-Test-Principal", "builtin:"+who)
	}
	stillDeleted := func(t *testing.T, _ response) {
		t.Helper()
		require.Equal(t, 404, e.b.do(t, "GET", "/v1/wh/namespaces/nsa/tables/stolen", nil, "X-Test-Principal", holesLocal).status)
		r := e.b.do(t, "GET", "/management/v1/warehouses/wh/deleted", nil, "X-Test-Principal", holesLocal)
		require.Contains(t, string(r.body), e.bt, "still deleted")
	}
	message := func(want string) func(*testing.T, response) {
		return func(t *testing.T, r response) {
			stillDeleted(t, r)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, want)
		}
	}
	return []hostileCase{
		// The probe of the issue: no right on nsb, into nsa under a new name.
		withAfter(undrop("into-own-namespace-no-rights-on-source", "mallory", to([]string{"nsa"}, "stolen")).status(403), stillDeleted),
		withAfter(undrop("in-place-no-rights-on-source", "mallory", map[string]any{}).status(403), stillDeleted),
		// Rights on both sides still do not move it across namespaces.
		withAfter(undrop("into-other-namespace", "carol", to([]string{"nsa"}, "stolen")).status(400), message("its own namespace")),
		withAfter(undrop("into-child-namespace", "dave", to([]string{"nsb", "x"}, "bt")).status(400), message("its own namespace")),
		// A new name needs table-drop on the old one, and the old one taken.
		withAfter(undrop("new-name-without-drop", "carol", to([]string{"nsb"}, "other")).status(403), stillDeleted),
		withAfter(undrop("new-name-while-free", "dave", to([]string{"nsb"}, "other")).status(400), message("its own name is free")),
		withAfter(undrop("namespace-only", "dave", map[string]any{"namespace": []string{"nsb"}}).status(400), stillDeleted),
		withAfter(undrop("empty-namespace", "dave", to([]string{}, "bt")).status(400), stillDeleted),
		// Duplicate keys: the one the action reads is the one authorized.
		withAfter(undrop("duplicate-namespace-key", "dave", `{"namespace":["nsb"],"name":"x","namespace":["nsa"]}`).status(400), message("appears twice")),
		withAfter(undrop("case-variant-key", "dave", `{"namespace":["nsb"],"name":"x","Namespace":["nsa"]}`).status(400), message("appears twice")),
		withAfter(hostilePost("rename-duplicate-destination", "/v1/wh/tables/rename",
			`{"source":{"namespace":["nsa"],"name":"from_b"},"destination":{"namespace":["nsa"],"name":"x"},"destination":{"namespace":["nsb"],"name":"x"}}`).
			with("X-Test-Principal", holesLocal).status(400), message("appears twice")),
		withAfter(hostilePost("grant-duplicate-resource", "/management/v1/roles/dave/grants",
			`{"privilege":"table-drop","resource":{"kind":"namespace","warehouse":"wh","namespace":["nsa"]},"resource":{"kind":"server"}}`).
			with("X-Test-Principal", holesLocal).status(400), message("appears twice")),
		{name: "take-old-name", method: "POST", path: "/v1/wh/namespaces/nsb/tables", body: map[string]any{"name": "bt", "schema": jsonRaw(testSchema)},
			headers: []string{"X-Test-Principal", holesLocal}, harmless: true},
		withAfter(undrop("new-name-while-taken", "dave", to([]string{"nsb"}, "bt_back")).ok(), func(t *testing.T, r response) {
			require.Equal(t, 200, r.status, "%s", r.body)
			require.JSONEq(t, `{"kind":"table","namespace":["nsb"],"name":"bt_back"}`, string(r.body))
		}),
	}
}

func withAfter(c hostileCase, after func(*testing.T, response)) hostileCase {
	c.after = after
	return c
}

// eventCases: a rename's hidden source is redacted; every filter list and
// the page size are bounded with a 400, never a 500.
func (e *holesEnv) eventCases(t *testing.T) []hostileCase {
	const path = "/v1/wh/events"
	query := func(name, who string, body any) hostileCase {
		return hostilePost(name, path, body).with("X-Test-Principal", who)
	}
	uuids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		}
		return out
	}
	names := func(n int) [][]string {
		out := make([][]string, n)
		for i := range out {
			out[i] = []string{"nsa", fmt.Sprint("t", i)}
		}
		return out
	}
	words := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "table"
		}
		return out
	}
	rename := func(wantSource string) func(*testing.T, response) {
		return func(t *testing.T, r response) {
			require.Equal(t, 200, r.status, "%s", r.body)
			var p eventsPage
			require.NoError(t, json.Unmarshal(r.body, &p))
			found := false
			for _, ev := range p.Events {
				if ev.Operation["operation-type"] != "rename-table" {
					continue
				}
				found = true
				src, err := json.Marshal(ev.Operation["source"])
				require.NoError(t, err)
				require.JSONEq(t, wantSource, string(src))
			}
			require.True(t, found, "the rename's event is listed: %s", r.body)
		}
	}
	capMsg := func(t *testing.T, r response) {
		_, msg := r.errorOf(t)
		require.Contains(t, msg, "at most 1000")
	}
	return []hostileCase{
		withAfter(query("rename-source-hidden", "builtin:mallory", map[string]any{}).ok(), func(t *testing.T, r response) {
			rename(`{"namespace":[],"name":""}`)(t, r)
			require.NotContains(t, string(r.body), "nsb")
			require.NotContains(t, string(r.body), "bmove")
			require.Contains(t, string(r.body), `"x-lakehold.redacted":["source"]`)
		}),
		withAfter(query("rename-source-visible", "builtin:dave", map[string]any{}).ok(), rename(`{"namespace":["nsb"],"name":"bmove"}`)),
		withAfter(query("rename-source-operator", holesLocal, map[string]any{}).ok(), rename(`{"namespace":["nsb"],"name":"bmove"}`)),
		query("page-size-0", "builtin:mallory", map[string]any{"page-size": 0}).status(400),
		query("page-size-negative", "builtin:mallory", map[string]any{"page-size": -1}).status(400),
		query("page-size-1001", "builtin:mallory", map[string]any{"page-size": 1001}).status(400),
		query("page-size-2^40", "builtin:mallory", map[string]any{"page-size": int64(1) << 40}).status(400),
		query("page-size-1", "builtin:mallory", map[string]any{"page-size": 1}).ok(),
		withAfter(query("uuids-200000", "builtin:mallory", map[string]any{"catalog-objects-by-uuid": uuids(200000)}).status(400), capMsg),
		withAfter(query("uuids-1001", "builtin:mallory", map[string]any{"catalog-objects-by-uuid": uuids(1001)}).status(400), capMsg),
		query("uuids-1000", "builtin:mallory", map[string]any{"catalog-objects-by-uuid": uuids(1000)}).ok(),
		withAfter(query("names-1001", "builtin:mallory", map[string]any{"catalog-objects-by-name": names(1001)}).status(400), capMsg),
		query("names-1000", "builtin:mallory", map[string]any{"catalog-objects-by-name": names(1000)}).ok(),
		withAfter(query("operation-types-1001", "builtin:mallory", map[string]any{"operation-types": words(1001)}).status(400), capMsg),
		query("operation-types-1000", "builtin:mallory", map[string]any{"operation-types": words(1000)}).ok(),
		withAfter(query("object-types-1001", "builtin:mallory", map[string]any{"object-types": words(1001)}).status(400), capMsg),
		query("object-types-1000", "builtin:mallory", map[string]any{"object-types": words(1000)}).ok(),
		query("all-lists-full", holesLocal, map[string]any{"catalog-objects-by-uuid": uuids(1000), "catalog-objects-by-name": names(1000),
			"operation-types": words(1000), "object-types": words(1000)}).ok(),
		query("name-nul", "builtin:mallory", map[string]any{"catalog-objects-by-name": [][]string{{"ns\x00a", "t"}}}).ok(),
		query("name-invalid-utf8", "builtin:mallory", `{"catalog-objects-by-name":[["\xff\xfe","t"]]}`).ok(),
		query("name-deep", "builtin:mallory", map[string]any{"catalog-objects-by-name": [][]string{strings.Split(strings.Repeat("a.", 10000)+"t", ".")}}).ok(),
		query("since-max", "builtin:mallory", map[string]any{"since-timestamp-ms": int64(1<<63 - 1)}).ok(),
		query("since-negative", "builtin:mallory", map[string]any{"since-timestamp-ms": -1}).ok(),
		query("token-junk", "builtin:mallory", map[string]any{"continuation-token": "!!"}).status(400),
	}
}
