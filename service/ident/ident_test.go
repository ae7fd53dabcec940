package ident_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/ident"
)

func TestValidateNamespace(t *testing.T) {
	level := strings.Repeat("a", ident.MaxNameBytes)
	for _, c := range []struct {
		levels []string
		ok     bool
	}{
		{[]string{"a"}, true},
		{[]string{"a", "b", "c"}, true},
		{[]string{level}, true},
		{[]string{level + "a"}, false},
		{nil, false},
		{[]string{""}, false},
		{[]string{"a", ""}, false},
		{make([]string, ident.MaxNamespaceDepth+1), false},
		{[]string{"a\x1fb"}, false}, // the store's level separator
		{[]string{"a\x00"}, false},
		{[]string{"a\u0085"}, false}, // C1 control
		{[]string{"\xff"}, false},
		{[]string{level, level, level, level}, true},       // 1023 bytes with separators
		{[]string{level, level, level, level, "a"}, false}, // 1025 bytes: too long in all
	} {
		err := ident.ValidateNamespace(c.levels)
		if c.ok {
			require.NoError(t, err, "%q", c.levels)
			continue
		}
		require.Error(t, err, "%q", c.levels)
		require.Equal(t, fault.BadRequest, fault.KindOf(err), "%q", c.levels)
	}
}

func TestValidateIdentAndNotFound(t *testing.T) {
	require.NoError(t, ident.ValidateIdent(ident.Ident{Namespace: []string{"ns"}, Name: "t"}))
	require.Error(t, ident.ValidateIdent(ident.Ident{Namespace: []string{"ns"}, Name: ""}))
	require.Error(t, ident.ValidateIdent(ident.Ident{Name: "t"}))
	id := ident.Ident{Namespace: []string{"a", "b"}, Name: "t"}
	require.Equal(t, "a.b.t", id.String())
	for err, kind := range map[error]fault.Kind{
		ident.TableNotFound(nil, id):               fault.NoSuchTable,
		ident.ViewNotFound(nil, id):                fault.NoSuchView,
		ident.NamespaceNotFound(nil, id.Namespace): fault.NoSuchNamespace,
		ident.WarehouseNotFound(nil, "wh"):         fault.NoSuchWarehouse,
	} {
		require.Equal(t, kind, fault.KindOf(err))
		require.Equal(t, 404, fault.StatusOf(err))
	}
	require.Equal(t, "Table does not exist: a.b.t", fault.ClientText(ident.TableNotFound(nil, id)))
}
