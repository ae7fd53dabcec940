package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
)

func TestRoleCommands(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	run1 := func(args ...string) error {
		out.Reset()
		return run(append(args, "--data-dir", dir), &out, &errb)
	}
	require.NoError(t, run1("role", "create", "eng", "--description", "engineers"))
	require.NoError(t, run1("role", "grant", "eng", "table-read-data", "--on", "namespace:wh/a.b"))
	require.NoError(t, run1("role", "grant", "eng", "manage-grants", "--on", "server"))
	require.NoError(t, run1("role", "assign", "eng", "group:data"))
	require.NoError(t, run1("role", "show", "eng"))
	require.Equal(t, "grant\ttable-read-data\tnamespace:wh/a.b\ngrant\tmanage-grants\tserver\nassigned\tgroup:data\n", out.String())
	require.NoError(t, run1("role", "list"))
	require.Equal(t, "eng\tengineers\n", out.String())

	require.ErrorContains(t, run1("role", "grant", "eng", "table-read-data", "--on", "bucket:x"), "--on")
	require.ErrorContains(t, run1("role", "grant", "eng", "drop-everything", "--on", "server"), `Unknown privilege "drop-everything"`)
	require.ErrorContains(t, run1("role", "grant", "eng", "manage-grants", "--on", "warehouse:wh"), "cannot be granted on a warehouse")
	require.ErrorContains(t, run1("role", "assign", "eng", "user:x"), "Unknown assignee kind")
	require.ErrorContains(t, run1("role", "assign", "nope", "oidc:x"), "Role does not exist: nope")

	require.NoError(t, run1("role", "revoke", "eng", "manage-grants", "--on", "server"))
	require.NoError(t, run1("role", "unassign", "eng", "group:data"))
	require.NoError(t, run1("role", "show", "eng"))
	require.Equal(t, "grant\ttable-read-data\tnamespace:wh/a.b\n", out.String())
	require.NoError(t, run1("role", "delete", "eng"))
	require.NoError(t, run1("role", "list"))
	require.Empty(t, out.String())
}

func TestParseSecurable(t *testing.T) {
	cases := map[string]service.Resource{
		"server":          {Kind: service.ResourceServer},
		"warehouse:w":     {Kind: service.ResourceWarehouse, Warehouse: "w"},
		"namespace:w/a.b": {Kind: service.ResourceNamespace, Warehouse: "w", Namespace: []string{"a", "b"}},
		"table:w/a/t":     {Kind: service.ResourceTable, Warehouse: "w", Namespace: []string{"a"}, Name: "t"},
		"view:w/a.b/v":    {Kind: service.ResourceView, Warehouse: "w", Namespace: []string{"a", "b"}, Name: "v"},
	}
	for in, want := range cases {
		got, err := parseSecurable(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
		require.Equal(t, in, securableSpec(got))
	}
	for _, in := range []string{"", "server:x", "warehouse:", "warehouse:w/a", "namespace:w", "table:w/a", "view:w/a/b/c", "bucket:w"} {
		_, err := parseSecurable(in)
		require.Error(t, err, in)
	}
}
