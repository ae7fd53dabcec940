package access_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
)

func TestCheckGrant(t *testing.T) {
	table := access.Resource{Kind: access.ResourceTable, Warehouse: "wh", Namespace: []string{"ns"}, Name: "t"}
	ns := access.Resource{Kind: access.ResourceNamespace, Warehouse: "wh", Namespace: []string{"ns"}}
	for _, c := range []struct {
		priv access.Privilege
		r    access.Resource
		ok   bool
	}{
		{access.PrivTableReadData, table, true},
		{access.PrivTableCreate, ns, true},
		{access.PrivTableCreate, table, false}, // only on containers
		{access.PrivManageGrants, access.Resource{Kind: access.ResourceServer}, true},
		{access.PrivManageGrants, ns, false},
		{"no-such-privilege", table, false},
		{access.PrivTableReadData, access.Resource{Kind: "bucket"}, false},
		{access.PrivTableReadData, access.Resource{Kind: access.ResourceTable, Warehouse: "wh", Name: "t"}, false},
		{access.PrivNamespaceList, access.Resource{Kind: access.ResourceWarehouse, Warehouse: "wh", Name: "x"}, false},
	} {
		err := access.CheckGrant(c.priv, c.r)
		if c.ok {
			require.NoError(t, err, "%s on %s", c.priv, c.r)
		} else {
			require.Equal(t, fault.BadRequest, fault.KindOf(err), "%s on %s: %v", c.priv, c.r, err)
		}
	}
}

func TestPrivilegesOnAndAssignees(t *testing.T) {
	on := access.PrivilegesOn(access.ResourceTable)
	require.Contains(t, on, access.PrivTableReadData)
	require.NotContains(t, on, access.PrivTableCreate, "created in a namespace, not held on a table")
	require.Len(t, access.AllPrivileges(), 19)
	a, err := access.ParseAssignee("group:admins")
	require.NoError(t, err)
	require.Equal(t, access.Assignee{Kind: access.AssigneeGroup, Name: "admins"}, a)
	for _, bad := range []string{"user:x", "builtin:", "admins"} {
		_, err := access.ParseAssignee(bad)
		require.Equal(t, fault.BadRequest, fault.KindOf(err), bad)
	}
}

func TestAllowAllAndAuditText(t *testing.T) {
	ctx, p := context.Background(), identity.Principal{Source: identity.SourceAnonymous}
	var az access.Authorizer = access.AllowAll{}
	require.NoError(t, az.Authorize(ctx, p, access.PrivManageGrants, access.Resource{Kind: access.ResourceServer}))
	level, err := az.TableAccess(ctx, p, access.Resource{Kind: access.ResourceTable})
	require.NoError(t, err)
	require.Equal(t, credentials.AccessReadWrite, level)

	got := access.AuditText("a\x00b\xffc" + strings.Repeat("é", 600))
	require.True(t, utf8.ValidString(got))
	require.NotContains(t, got, "\x00")
	require.LessOrEqual(t, len(got), 1024)
	require.Equal(t, "kind:wh/a.b/t", access.Resource{Kind: "kind", Warehouse: "wh", Namespace: []string{"a", "b"}, Name: "t"}.String())
}
