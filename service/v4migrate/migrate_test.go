package v4migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/validation"
)

// The Migrator is wired by the service (it stages through tablecommit and
// v4commits, plans through planning, grants through storageaccess), so
// these tests drive it through the service's routes over SQLite and local
// files: CommitTable hands an upgrade to it, ExportTable is its export.

const schemaJSON = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

// newCatalog is a service with warehouse wh and namespace ns.
func newCatalog(t *testing.T) *service.Service {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err = svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	return svc
}

func createTable(t *testing.T, svc *service.Service, name, version string) ident.Ident {
	t.Helper()
	_, err := svc.Tables().CreateTable(context.Background(), "wh", []string{"ns"}, service.CreateTableInput{Name: name,
		Schema: json.RawMessage(schemaJSON), Properties: map[string]string{"format-version": version}})
	require.NoError(t, err)
	return ident.Ident{Namespace: []string{"ns"}, Name: name}
}

func formatVersion(t *testing.T, metadata []byte) int {
	t.Helper()
	var head struct {
		FormatVersion int `json:"format-version"`
	}
	require.NoError(t, json.Unmarshal(metadata, &head))
	return head.FormatVersion
}

// TestUpgradeToV4: a commit that upgrades a v2 table to format 4 goes to
// the upgrade, which answers with the v4 metadata and the upgrade's
// warning; the table then loads as v4.
func TestUpgradeToV4(t *testing.T) {
	ctx := context.Background()
	svc := newCatalog(t)
	id := createTable(t, svc, "t", "2")
	res, err := svc.CommitTable(ctx, "wh", service.TableChange{Ident: id,
		Updates: json.RawMessage(`[{"action":"upgrade-format-version","format-version":4}]`)})
	require.NoError(t, err)
	require.Equal(t, 4, formatVersion(t, res.Metadata))
	require.Equal(t, service.V4UpgradeWarning, res.Warning)

	got, err := svc.Tables().LoadTable(ctx, "wh", id, "", service.NoDelegation)
	require.NoError(t, err)
	require.Equal(t, 4, formatVersion(t, got.Metadata))
}

// TestExport: a v4 table exports to a new table of the format asked; a
// source that is not v4 is refused (table-not-v4) and a taken target name
// is 409, neither creating anything.
func TestExport(t *testing.T) {
	ctx := context.Background()
	svc := newCatalog(t)
	src := createTable(t, svc, "src", "4")
	plain := createTable(t, svc, "plain", "2")
	out := ident.Ident{Namespace: []string{"ns"}, Name: "out"}

	res, err := svc.ExportTable(ctx, "wh", service.ExportInput{Source: src, Target: out, FormatVersion: 2})
	require.NoError(t, err)
	require.Equal(t, 2, formatVersion(t, res.Metadata))
	got, err := svc.Tables().LoadTable(ctx, "wh", out, "", service.NoDelegation)
	require.NoError(t, err)
	require.Equal(t, res.MetadataLocation, got.MetadataLocation)

	_, err = svc.ExportTable(ctx, "wh", service.ExportInput{Source: plain, Target: ident.Ident{Namespace: []string{"ns"}, Name: "o2"}})
	var fe *fault.Error
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, validation.ReasonTableNotV4, fe.Reason)
	require.Error(t, svc.Tables().TableExists(ctx, "wh", ident.Ident{Namespace: []string{"ns"}, Name: "o2"}))

	_, err = svc.ExportTable(ctx, "wh", service.ExportInput{Source: src, Target: plain})
	require.Equal(t, fault.AlreadyExists, fault.KindOf(err))
}
