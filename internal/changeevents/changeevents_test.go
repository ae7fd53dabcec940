package changeevents

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

func TestSanitize(t *testing.T) {
	const loc = "s3://bucket/wh/ns/t"
	cases := []struct {
		name, in, want string
	}{
		{"empty", ``, `[]`},
		{"null", `null`, `[]`},
		{"not a list", `{"action":"set-properties"}`, `[]`},
		{"not JSON", `[{"action":`, `[]`},
		{"secret property", `[{"action":"set-properties","updates":{"owner":"ml","s3.secret-access-key":"hunter2","adls.sas-token.acct":"sv=1","Password":"p"}}]`,
			`[{"action":"set-properties","updates":{"owner":"ml","s3.secret-access-key":"<redacted>","adls.sas-token.acct":"<redacted>","Password":"<redacted>"}}]`},
		{"only set-properties values are read by key", `[{"action":"remove-properties","removals":["s3.secret-access-key"]}]`,
			`[{"action":"remove-properties","removals":["s3.secret-access-key"]}]`},
		{"paths inside the table stay", `[{"action":"add-snapshot","snapshot":{"snapshot-id":9007199254740993,"manifest-list":"s3://bucket/wh/ns/t/metadata/snap-1.avro"}}]`,
			`[{"action":"add-snapshot","snapshot":{"snapshot-id":9007199254740993,"manifest-list":"s3://bucket/wh/ns/t/metadata/snap-1.avro"}}]`},
		{"paths outside the table go", `[{"action":"set-statistics","statistics":{"statistics-path":"s3://other/x.puffin"}},{"action":"set-location","location":"/etc/passwd"}]`,
			`[{"action":"set-statistics","statistics":{"statistics-path":"<redacted>"}},{"action":"set-location","location":"<redacted>"}]`},
		{"a sibling with the same prefix is outside", `[{"action":"set-location","location":"s3://bucket/wh/ns/t2"}]`,
			`[{"action":"set-location","location":"<redacted>"}]`},
		{"the location itself stays", `[{"action":"set-location","location":"s3://bucket/wh/ns/t/"}]`,
			`[{"action":"set-location","location":"s3://bucket/wh/ns/t/"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.JSONEq(t, c.want, string(Sanitize(json.RawMessage(c.in), loc)))
		})
	}
	// 64-bit ids survive (no float round trip).
	require.Contains(t, string(Sanitize(json.RawMessage(`[{"snapshot-id":9007199254740993}]`), loc)), "9007199254740993")
	// Without a location every path goes.
	require.JSONEq(t, `[{"location":"<redacted>"}]`, string(Sanitize(json.RawMessage(`[{"location":"file:///tmp/x"}]`), "")))
}

func FuzzSanitize(f *testing.F) {
	f.Add([]byte(`[{"action":"set-properties","updates":{"token":"x"}}]`), "s3://b/t")
	f.Add([]byte(`[1, "a", null, {"x": ["/p", "s3://b/t/x"]}]`), "s3://b/t")
	f.Fuzz(func(t *testing.T, in []byte, loc string) {
		out := Sanitize(in, loc)
		require.True(t, json.Valid(out), "%s", out)
		// Numbers keep their text (64-bit ids), even one no float64 holds.
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		var list []any
		require.NoError(t, dec.Decode(&list), "always a list")
	})
}

func TestBuilders(t *testing.T) {
	who := Who{RequestID: "r1", Actor: "builtin:alice"}
	tbl := Object{Warehouse: "wh", Namespace: []string{"a", "b"}, Name: "t", Kind: store.KindTable, UUID: "u1", Location: "s3://x/t"}
	view := Object{Warehouse: "wh", Namespace: []string{"a"}, Name: "v", Kind: store.KindView, UUID: "u2", Location: "s3://x/v"}
	body := func(e store.Event) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal(e.Body, &m))
		return m
	}
	e := Update(tbl, who, json.RawMessage(`[{"action":"set-properties","updates":{"k":"v"}}]`), json.RawMessage(`[{"type":"assert-create"}]`))
	require.Equal(t, UpdateTable, e.Operation)
	require.Equal(t, "table", e.ObjectType)
	require.Equal(t, "u1", e.ObjectUUID)
	require.Equal(t, "r1", e.RequestID)
	require.Equal(t, map[string]any{"operation-type": "update-table", "identifier": map[string]any{"namespace": []any{"a", "b"}, "name": "t"},
		"table-uuid": "u1", "updates": []any{map[string]any{"action": "set-properties", "updates": map[string]any{"k": "v"}}},
		"requirements": []any{map[string]any{"type": "assert-create"}}}, body(e))

	e = Update(view, who, json.RawMessage(`[]`), nil)
	require.Equal(t, UpdateView, e.Operation)
	require.Equal(t, "u2", body(e)["view-uuid"])
	require.NotContains(t, body(e), "requirements")

	e = Rename(tbl, who, []string{"c"}, "t2")
	require.Equal(t, RenameTable, e.Operation)
	require.Equal(t, []string{"c"}, e.Namespace, "the event is about the destination")
	require.Equal(t, map[string]any{"namespace": []any{"a", "b"}, "name": "t"}, body(e)["source"])
	require.Equal(t, map[string]any{"namespace": []any{"c"}, "name": "t2"}, body(e)["destination"])

	require.Equal(t, true, body(Drop(DropTable, tbl, who, true))["purge"])
	require.NotContains(t, body(Drop(DropView, view, who, false)), "purge")
	require.Equal(t, UndropView, Undrop(view, who, "d1").Operation)

	e = NamespaceCreated("wh", []string{"a"}, who, map[string]string{"owner": "x", "gcs.oauth2.token": "secret"})
	require.Equal(t, "namespace", e.ObjectType)
	require.Equal(t, map[string]any{"owner": "x", "gcs.oauth2.token": Redacted}, body(e)["properties"])
	e = NamespaceUpdated("wh", []string{"a"}, who, nil, []string{"k"}, nil)
	require.Equal(t, []any{}, body(e)["updated"])
	require.NotContains(t, body(e), "missing")
	require.Equal(t, []any{"a"}, body(NamespaceDropped("wh", []string{"a"}, who))["namespace"])
}

func TestWireForms(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 123e6, time.UTC)
	mk := func(id, req string) *store.Event {
		e := Update(Object{Warehouse: "wh", Namespace: []string{"a", "b"}, Name: "t", Kind: store.KindTable, UUID: "u1"},
			Who{RequestID: req, Actor: "oidc:sub"}, json.RawMessage(`[]`), nil)
		e.ID, e.At = id, at
		return &e
	}
	e1, e2 := mk("e1", "r"), mk("e2", "r")
	e1.RequestEvents, e2.RequestEvents = 3, 3 // the third on another page
	rest := REST([]*store.Event{e1, e2, mk("e3", "")})
	require.Equal(t, 3, rest[0].RequestEventCount, "as many as the change wrote, whatever the page")
	require.Equal(t, "e3", rest[2].RequestID, "a change without a request is its own")
	require.Equal(t, 1, rest[2].RequestEventCount)
	require.Equal(t, at.UnixMilli(), rest[0].TimestampMS)
	require.Equal(t, map[string]string{"id": "oidc:sub"}, rest[0].Actor)

	raw, err := CloudEvent(mk("e1", "r"), "https://catalog.example")
	require.NoError(t, err)
	var ce map[string]any
	require.NoError(t, json.Unmarshal(raw, &ce))
	require.Equal(t, "1.0", ce["specversion"])
	require.Equal(t, "e1", ce["id"])
	require.Equal(t, "https://catalog.example", ce["source"])
	require.Equal(t, "io.lakehold.catalog.update-table", ce["type"])
	require.Equal(t, "wh/a.b/t", ce["subject"])
	require.Equal(t, "2026-12-04T10:00:00.123Z", ce["time"])
	require.Equal(t, "u1", ce["objectuuid"])
	require.Equal(t, "e1", ce["data"].(map[string]any)["event-id"])
	for k := range ce {
		require.Regexp(t, "^[a-z0-9]{1,20}$", k, "CloudEvents attribute names are lower-case alphanumerics")
	}
	require.Equal(t, "io.lakehold.catalog.undrop-table", CloudEventType(UndropTable))
	for _, op := range Operations {
		require.False(t, strings.ContainsAny(op, " *>"), op)
	}
}
