package service

import (
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// The location policy (docs/design.md, "Locations") is package locations;
// these names keep the service's callers whole. Each function says there
// what it returns when.

// dataLocation is where the catalog writes a table's new data files (locations.DataLocation).
func dataLocation(tableLoc string, props map[string]string) string {
	return locations.DataLocation(tableLoc, props)
}

// warehousePrefixes returns the warehouse location and its extra prefixes (locations.WarehousePrefixes).
func warehousePrefixes(w *store.Warehouse) location.Set { return locations.WarehousePrefixes(w) }

// tablePrefixes returns where a table or view at tableLoc may have files (locations.TablePrefixes).
func tablePrefixes(w *store.Warehouse, tableLoc string) location.Set {
	return locations.TablePrefixes(w, tableLoc)
}

// checkObjectLocation validates a new or moved object's location (locations.CheckObjectLocation).
func checkObjectLocation(w *store.Warehouse, loc string) (string, error) {
	return locations.CheckObjectLocation(w, loc)
}

// defaultLocation is where a new table or view goes unless told (locations.DefaultLocation).
func defaultLocation(w *store.Warehouse, ns *store.Namespace, name string) string {
	return locations.DefaultLocation(w, ns, name)
}

// newObjectLocation is where a table or view being created goes (locations.NewObjectLocation).
func newObjectLocation(w *store.Warehouse, ns *store.Namespace, name, given string, props map[string]string) (loc, canon string, err error) {
	return locations.NewObjectLocation(w, ns, name, given, props)
}

// checkWritePaths checks a table's write.*.path properties (locations.CheckWritePaths).
func checkWritePaths(w *store.Warehouse, tableLoc string, props map[string]string) error {
	return locations.CheckWritePaths(w, tableLoc, props)
}

// checkTableMetadataLocations checks every location table metadata names
// (locations.CheckTableMetadataLocations).
func (s *Service) checkTableMetadataLocations(w *store.Warehouse, meta table.Metadata) error {
	return locations.CheckTableMetadataLocations(w, meta)
}

// checkFileInTable checks that a file lies inside the table's prefixes (locations.CheckFileInTable).
func checkFileInTable(w *store.Warehouse, tableLoc, loc, what string) error {
	return locations.CheckFileInTable(w, tableLoc, loc, what)
}

// fileName names loc for messages and logs (locations.FileName).
func fileName(w *store.Warehouse, base, loc string) string { return locations.FileName(w, base, loc) }

// prepareStagedMetadataDir creates a staged table's metadata directory when
// it is on the local file system. A staged create writes nothing, but some
// engines (DuckDB's CTAS) write manifests under it before the commit that
// creates the table, and a local file system, unlike an object store, has
// no implicit directories. An uncommitted stage leaves the empty directory
// behind, as a failed engine write would. 500 when it cannot be created.
func prepareStagedMetadataDir(w *store.Warehouse, tableLoc string, props map[string]string) error {
	dir, err := location.Normalize(path.Dir(tableaccess.NewMetadataLocation(tableLoc, props, "")))
	if err != nil || !strings.HasPrefix(dir, "file:///") || !tablePrefixes(w, tableLoc).Contains(dir) {
		return nil // object stores need no directory; checkWritePaths vetted the rest
	}
	u, err := url.Parse(dir)
	if err != nil {
		return nil
	}
	if err := os.MkdirAll(u.Path, 0o755); err != nil {
		return fault.Wrap(fault.Internal, err, "Failed to create the metadata directory %s", fileName(w, tableLoc, dir))
	}
	return nil
}
