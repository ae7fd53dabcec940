package tables_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tables"
	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

const schema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

// newRoom returns the tables room of a catalog over SQLite with warehouse
// wh and namespaces ns and ns2, built by the service as in production.
func newRoom(t *testing.T) *tables.Tables {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	for _, ns := range []string{"ns", "ns2"} {
		_, err = svc.CreateNamespace(ctx, "wh", []string{ns}, nil)
		require.NoError(t, err)
	}
	return svc.Tables()
}

func create(t *testing.T, tb *tables.Tables, ns, name string, props map[string]string) *tables.TableResult {
	t.Helper()
	res, err := tb.CreateTable(context.Background(), "wh", []string{ns}, tables.CreateTableInput{Name: name, Schema: []byte(schema), Properties: props})
	require.NoError(t, err)
	return res
}

func TestLoadAnswersWhatCreateWrote(t *testing.T) {
	ctx := context.Background()
	tb := newRoom(t)
	created := create(t, tb, "ns", "t", nil)
	require.NotEmpty(t, created.MetadataLocation)
	id := ident.Ident{Namespace: []string{"ns"}, Name: "t"}

	loaded, err := tb.LoadTable(ctx, "wh", id, "", storageaccess.NoDelegation)
	require.NoError(t, err)
	require.Equal(t, created.MetadataLocation, loaded.MetadataLocation)
	require.JSONEq(t, string(created.Metadata), string(loaded.Metadata))

	tag, err := tb.TableETag(ctx, "wh", id, "")
	require.NoError(t, err)
	require.Equal(t, tables.ETag(created.MetadataLocation, "all"), tag)
	refsTag, err := tb.TableETag(ctx, "wh", id, "refs")
	require.NoError(t, err)
	require.NotEqual(t, tag, refsTag, "the refs-only document is another representation")

	_, err = tb.LoadTable(ctx, "wh", id, "some", storageaccess.NoDelegation)
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	_, err = tb.LoadTable(ctx, "wh", ident.Ident{Namespace: []string{"ns"}, Name: "missing"}, "", storageaccess.NoDelegation)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err))
}

func TestCreateRefusesBadVersionsAndTakenNames(t *testing.T) {
	ctx := context.Background()
	tb := newRoom(t)
	_, err := tb.CreateTable(ctx, "wh", []string{"ns"}, tables.CreateTableInput{Name: "t", Schema: []byte(schema),
		Properties: map[string]string{"format-version": "9"}})
	require.Equal(t, fault.BadRequest, fault.KindOf(err))

	create(t, tb, "ns", "t", nil)
	_, err = tb.CreateTable(ctx, "wh", []string{"ns"}, tables.CreateTableInput{Name: "t", Schema: []byte(schema)})
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err))
	_, err = tb.CreateTable(ctx, "wh", []string{"ns"}, tables.CreateTableInput{Name: "t", Schema: []byte(schema), StageCreate: true})
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err), "a staged create checks the name too")
}

func TestStagedCreatePersistsNothing(t *testing.T) {
	ctx := context.Background()
	tb := newRoom(t)
	res, err := tb.CreateTable(ctx, "wh", []string{"ns"}, tables.CreateTableInput{Name: "s", Schema: []byte(schema), StageCreate: true})
	require.NoError(t, err)
	require.Empty(t, res.MetadataLocation)
	require.NotEmpty(t, res.Metadata)
	err = tb.TableExists(ctx, "wh", ident.Ident{Namespace: []string{"ns"}, Name: "s"})
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err))
}

func TestListRenameDrop(t *testing.T) {
	ctx := context.Background()
	tb := newRoom(t)
	create(t, tb, "ns", "a", nil)
	create(t, tb, "ns", "b", nil)
	names, next, err := tb.List(ctx, "wh", []string{"ns"}, store.KindTable, store.Page{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, names)
	require.Empty(t, next)
	views, _, err := tb.List(ctx, "wh", []string{"ns"}, store.KindView, store.Page{})
	require.NoError(t, err)
	require.Empty(t, views)
	_, _, err = tb.List(ctx, "wh", []string{"nope"}, store.KindTable, store.Page{})
	require.Equal(t, fault.NoSuchNamespace, fault.KindOf(err))

	a := ident.Ident{Namespace: []string{"ns"}, Name: "a"}
	moved := ident.Ident{Namespace: []string{"ns2"}, Name: "c"}
	require.NoError(t, tb.Rename(ctx, "wh", store.KindTable, a, moved))
	require.NoError(t, tb.TableExists(ctx, "wh", moved))
	err = tb.Rename(ctx, "wh", store.KindTable, a, moved)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err))

	b := ident.Ident{Namespace: []string{"ns"}, Name: "b"}
	require.NoError(t, tb.DropTable(ctx, "wh", b, false))
	names, _, err = tb.List(ctx, "wh", []string{"ns"}, store.KindTable, store.Page{})
	require.NoError(t, err)
	require.Empty(t, names)
	err = tb.DropTable(ctx, "wh", b, false)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(err))
}

func TestUnregisterThenRegister(t *testing.T) {
	ctx := context.Background()
	tb := newRoom(t)
	created := create(t, tb, "ns", "t", nil)
	id := ident.Ident{Namespace: []string{"ns"}, Name: "t"}
	gone, err := tb.UnregisterTable(ctx, "wh", id)
	require.NoError(t, err)
	require.Equal(t, created.MetadataLocation, gone.MetadataLocation)
	require.Equal(t, fault.NoSuchTable, fault.KindOf(tb.TableExists(ctx, "wh", id)))

	back, err := tb.RegisterTable(ctx, "wh", []string{"ns"}, "again", gone.MetadataLocation, false, storageaccess.NoDelegation)
	require.NoError(t, err)
	require.Equal(t, gone.MetadataLocation, back.MetadataLocation)
	// A second name over the same files would let a purge of one delete
	// the other's data.
	_, err = tb.RegisterTable(ctx, "wh", []string{"ns"}, "twice", gone.MetadataLocation, false, storageaccess.NoDelegation)
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err))
}

// TestDropView: a dropped view is gone from the listing and from its
// room's loads; a second drop is 404 NoSuchView.
func TestDropView(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	_, err = svc.Views().Create(ctx, "wh", []string{"ns"}, views.CreateInput{Name: "v", Schema: []byte(schema),
		ViewVersion: []byte(`{"version-id":1,"schema-id":0,"timestamp-ms":1,"summary":{},"default-namespace":["ns"],` +
			`"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`)})
	require.NoError(t, err)
	v := ident.Ident{Namespace: []string{"ns"}, Name: "v"}
	tb := svc.Tables()
	require.NoError(t, tb.DropView(ctx, "wh", v))
	names, _, err := tb.List(ctx, "wh", []string{"ns"}, store.KindView, store.Page{})
	require.NoError(t, err)
	require.Empty(t, names)
	_, err = svc.Views().Load(ctx, "wh", v)
	require.Equal(t, fault.NoSuchView, fault.KindOf(err))
	require.Equal(t, fault.NoSuchView, fault.KindOf(tb.DropView(ctx, "wh", v)))
}
