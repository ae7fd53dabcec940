package changefeed

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

func TestEventFilter(t *testing.T) {
	f, err := eventFilter("wh", Query{SinceMillis: 1000, ObjectTypes: []string{"table"},
		ObjectsByName: [][]string{{"a"}, {"a", "b", "t"}}})
	require.NoError(t, err)
	require.Equal(t, time.UnixMilli(1000), f.Since)
	require.Equal(t, []store.EventObject{{Namespace: []string{"a"}}, {Namespace: []string{"a", "b", "t"}},
		{Namespace: []string{"a", "b"}, Name: "t"}}, f.Objects, "a name asks for the namespace and the object")

	for name, q := range map[string]Query{
		"foreign token": {ContinuationToken: "not-ours"},
		"unknown type":  {ObjectTypes: []string{"function"}},
		"empty name":    {ObjectsByName: [][]string{{}}},
		"empty level":   {ObjectsByName: [][]string{{"a", ""}}},
	} {
		_, err := eventFilter("wh", q)
		require.Equal(t, fault.BadRequest, fault.KindOf(err), name)
	}
}

func TestEventResource(t *testing.T) {
	ns := []string{"a", "b"}
	for _, tc := range []struct {
		typ  string
		res  access.Resource
		priv access.Privilege
	}{
		{"table", access.TableResource("wh", ns, "t"), access.PrivTableReadMetadata},
		{"view", access.ViewResource("wh", ns, "t"), access.PrivViewRead},
		{"namespace", access.NamespaceResource("wh", ns), access.PrivNamespaceList},
	} {
		r, p := eventResource(&store.Event{Warehouse: "wh", Namespace: ns, Name: "t", ObjectType: tc.typ})
		if tc.typ == "namespace" {
			r, p = eventResource(&store.Event{Warehouse: "wh", Namespace: ns, ObjectType: tc.typ})
		}
		require.Equal(t, tc.res, r, tc.typ)
		require.Equal(t, tc.priv, p, tc.typ)
	}
}
