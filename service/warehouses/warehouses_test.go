package warehouses_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/warehouses"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// denyManage refuses managing warehouses and allows everything else.
type denyManage struct{ access.AllowAll }

func (denyManage) Authorize(_ context.Context, _ identity.Principal, priv access.Privilege, _ access.Resource) error {
	if priv == access.PrivManageWarehouses {
		return fault.New(fault.Forbidden, "denied")
	}
	return nil
}

// newRegistry is a Registry over a fresh SQLite catalog, judged by authz.
func newRegistry(t *testing.T, authz access.Authorizer) (*warehouses.Registry, store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	sealer, err := credentials.NewSealer(nil)
	require.NoError(t, err)
	ta := tableaccess.New(tableaccess.Options{Store: st, Authorizer: authz, Sealer: sealer, Clock: time.Now})
	return warehouses.New(warehouses.Deps{Store: st, Tables: ta, Sealer: sealer}), st
}

// TestCreateGetList: a created warehouse is stored with its location in
// canonical form and read back by Get and List; an unknown name is 404.
func TestCreateGetList(t *testing.T) {
	ctx := context.Background()
	r, _ := newRegistry(t, access.AllowAll{})
	dir := t.TempDir()
	w, err := r.Create(ctx, "wh", "file://localhost"+dir+"/", nil)
	require.NoError(t, err)
	require.Equal(t, "file://"+dir, w.Location)

	got, err := r.Get(ctx, "wh")
	require.NoError(t, err)
	require.Equal(t, w.Location, got.Location)
	all, err := r.List(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)

	_, err = r.Get(ctx, "nope")
	require.Equal(t, fault.NoSuchWarehouse, fault.KindOf(err))
}

// TestCreateRefuses: a bad name or location is 400, a taken name 409 and
// a location inside another warehouse's 400 (warehouses share no storage).
func TestCreateRefuses(t *testing.T) {
	ctx := context.Background()
	r, _ := newRegistry(t, access.AllowAll{})
	dir := t.TempDir()
	_, err := r.Create(ctx, "wh", "file://"+dir, nil)
	require.NoError(t, err)

	_, err = r.Create(ctx, "bad name!", "file://"+t.TempDir(), nil)
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	_, err = r.Create(ctx, "rel", "relative/path", nil)
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	_, err = r.Create(ctx, "wh", "file://"+t.TempDir(), nil)
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err))
	_, err = r.Create(ctx, "inner", "file://"+dir+"/inner", nil)
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
}

// TestEnsure: Ensure creates a missing warehouse, returns an existing one
// at the same location and refuses (409) one at another.
func TestEnsure(t *testing.T) {
	ctx := context.Background()
	r, _ := newRegistry(t, access.AllowAll{})
	dir := t.TempDir()
	w, err := r.Ensure(ctx, "wh", "file://"+dir)
	require.NoError(t, err)
	again, err := r.Ensure(ctx, "wh", "file://"+dir+"/")
	require.NoError(t, err)
	require.Equal(t, w.Location, again.Location)
	_, err = r.Ensure(ctx, "wh", "file://"+t.TempDir())
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err))
}

// TestDelete: a caller without manage-warehouses is refused; an empty
// warehouse is deleted, one with a namespace is 409, a missing one 404.
func TestDelete(t *testing.T) {
	ctx := context.Background()
	r, st := newRegistry(t, access.AllowAll{})
	_, err := r.Create(ctx, "empty", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = r.Create(ctx, "full", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = st.NamespaceCreate(ctx, "full", []string{"ns"}, nil)
	require.NoError(t, err)

	denied, _ := newRegistry(t, denyManage{})
	require.Equal(t, fault.Forbidden, fault.KindOf(denied.Delete(ctx, "empty")))

	require.NoError(t, r.Delete(ctx, "empty"))
	_, err = r.Get(ctx, "empty")
	require.Equal(t, fault.NoSuchWarehouse, fault.KindOf(err))
	require.Equal(t, fault.NamespaceNotEmpty, fault.KindOf(r.Delete(ctx, "full")))
	require.Equal(t, fault.NoSuchWarehouse, fault.KindOf(r.Delete(ctx, "empty")))
}
