package server_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/stretchr/testify/require"
)

func restCatalog(t *testing.T, b *bundle) *rest.Catalog {
	t.Helper()
	cat, err := rest.NewCatalog(context.Background(), "test", b.url, rest.WithWarehouseLocation("wh"),
		rest.WithAdditionalProps(iceberg.Properties{}))
	require.NoError(t, err)
	return cat
}

// TestIcebergGoConformance runs iceberg-go's catalog conformance suite with
// its REST client against the server, on both stores.
func TestIcebergGoConformance(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend) // one server; the suite isolates by namespace
			catalogtest.RunCatalogTests(t, catalogtest.Config{
				NewCatalog:                  func(t *testing.T) catalog.Catalog { return restCatalog(t, b) },
				SupportsNamespaceProperties: true,
			})
		})
	}
}
