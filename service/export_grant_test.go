package service_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

// downVendor fails every vend, as a storage profile whose STS is down.
type downVendor struct{}

func (downVendor) Vend(context.Context, credentials.WarehouseInfo, string, credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	return nil, nil, errors.New("sts down")
}

// TestExportKeepsACreatedTablesFiles: when the new table is created and
// only the credentials for the answer fail (503), the export's files stay:
// the table the catalog now records loads and its metadata file exists.
func TestExportKeepsACreatedTablesFiles(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, backend)
			svc := service.New(st, storage.NewProvider(), service.Options{Credentials: downVendor{},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			_, err := svc.CreateWarehouse(ctx, "wh", "file://"+t.TempDir(), nil)
			require.NoError(t, err)
			_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
			require.NoError(t, err)
			sc := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}`
			_, err = svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t", Schema: []byte(sc),
				Properties: map[string]string{"format-version": "4"}})
			require.NoError(t, err)

			target := service.Ident{Namespace: []string{"ns"}, Name: "t3"}
			_, err = svc.ExportTable(ctx, "wh", service.ExportInput{Source: service.Ident{Namespace: []string{"ns"}, Name: "t"},
				Target: target, Delegation: service.VendedCredentials})
			require.Equal(t, fault.Unavailable, fault.KindOf(err), "%v", err)

			res, err := svc.Tables().LoadTable(ctx, "wh", target, "", service.NoDelegation)
			require.NoError(t, err, "the created table is recorded")
			_, err = os.Stat(strings.TrimPrefix(res.MetadataLocation, "file://"))
			require.NoError(t, err, "its metadata file is still there")
		})
	}
}
