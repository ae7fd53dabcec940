package views_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

const (
	schemaJSON  = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`
	versionJSON = `{"version-id":1,"schema-id":0,"timestamp-ms":1,"summary":{},"default-namespace":["ns"],` +
		`"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`
)

// newViews is Views over a fresh SQLite catalog with warehouse wh (local
// files) and namespace ns, and its store (drops are package tables';
// these tests delete the row).
func newViews(t *testing.T) (*views.Views, store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file://" + t.TempDir()}))
	_, err = st.NamespaceCreate(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ta := tableaccess.New(tableaccess.Options{Store: st, Files: storage.NewProvider(), Authorizer: access.AllowAll{},
		Clock: time.Now, MaxClockOffset: 5 * time.Second, Logger: log})
	eng := commitengine.New(st, commitengine.Options{MaxAttempts: 3, Remove: ta.DeleteOrphan, Logger: log})
	return views.New(views.Deps{Tables: ta, Engine: eng}), st
}

// drop deletes view id's row, as a drop without soft deletion does.
func drop(t *testing.T, st store.Store) {
	t.Helper()
	_, err := st.ObjectDelete(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: vid.Namespace, Name: vid.Name, Kind: store.KindView})
	require.NoError(t, err)
}

var vid = ident.Ident{Namespace: []string{"ns"}, Name: "v"}

func create(t *testing.T, v *views.Views) *views.Result {
	t.Helper()
	res, err := v.Create(context.Background(), "wh", []string{"ns"}, views.CreateInput{Name: "v",
		Schema: json.RawMessage(schemaJSON), ViewVersion: json.RawMessage(versionJSON)})
	require.NoError(t, err)
	return res
}

// TestCreateLoadDrop: a created view is written under the warehouse and
// loads back as stored; a second create of the name is 409; once its row
// is gone it is 404 to Load and Exists.
func TestCreateLoadDrop(t *testing.T) {
	ctx := context.Background()
	v, st := newViews(t)
	res := create(t, v)
	require.Contains(t, res.MetadataLocation, "/ns/v-")
	require.Contains(t, res.MetadataLocation, "/metadata/00000-")

	got, err := v.Load(ctx, "wh", vid)
	require.NoError(t, err)
	require.Equal(t, res.MetadataLocation, got.MetadataLocation)
	require.NoError(t, v.Exists(ctx, "wh", vid))

	_, err = v.Create(ctx, "wh", []string{"ns"}, views.CreateInput{Name: "v",
		Schema: json.RawMessage(schemaJSON), ViewVersion: json.RawMessage(versionJSON)})
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err))

	drop(t, st)
	_, err = v.Load(ctx, "wh", vid)
	require.Equal(t, fault.NoSuchView, fault.KindOf(err))
	require.Equal(t, fault.NoSuchView, fault.KindOf(v.Exists(ctx, "wh", vid)))
}

// TestReplace: an update lands as the next metadata file with the new
// property; a failed requirement is 409 and changes nothing; bad JSON is
// 400.
func TestReplace(t *testing.T) {
	ctx := context.Background()
	v, st := newViews(t)
	first := create(t, v)
	var meta struct {
		UUID string `json:"view-uuid"`
	}
	require.NoError(t, json.Unmarshal(first.Metadata, &meta))

	res, err := v.Replace(ctx, "wh", vid, nil, json.RawMessage(`[{"action":"set-properties","updates":{"k":"v1"}}]`))
	require.NoError(t, err)
	require.Contains(t, res.MetadataLocation, "/metadata/00001-")
	var props struct {
		Properties map[string]string `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(res.Metadata, &props))
	require.Equal(t, "v1", props.Properties["k"])

	_, err = v.Replace(ctx, "wh", vid, json.RawMessage(`[{"type":"assert-view-uuid","uuid":"00000000-0000-0000-0000-000000000000"}]`),
		json.RawMessage(`[{"action":"set-properties","updates":{"k":"v2"}}]`))
	require.Equal(t, fault.CommitFailed, fault.KindOf(err))
	obj, err := st.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: vid.Namespace, Name: vid.Name, Kind: store.KindView})
	require.NoError(t, err)
	require.Equal(t, res.MetadataLocation, obj.MetadataLocation)

	_, err = v.Replace(ctx, "wh", vid, nil, json.RawMessage(`{`))
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
}

// TestRegister: a view's location is its own (registering its file under
// another name while it lives is 400); once dropped, its file (left in
// place) registers under a new name. A location outside the warehouse is
// 400.
func TestRegister(t *testing.T) {
	ctx := context.Background()
	v, st := newViews(t)
	first := create(t, v)
	_, err := v.Register(ctx, "wh", []string{"ns"}, "twin", first.MetadataLocation)
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	drop(t, st)
	res, err := v.Register(ctx, "wh", []string{"ns"}, "copy", first.MetadataLocation)
	require.NoError(t, err)
	require.Equal(t, first.MetadataLocation, res.MetadataLocation)
	_, err = v.Load(ctx, "wh", ident.Ident{Namespace: []string{"ns"}, Name: "copy"})
	require.NoError(t, err)

	_, err = v.Register(ctx, "wh", []string{"ns"}, "elsewhere", "file:///tmp/not-the-warehouse/v.metadata.json")
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
}
