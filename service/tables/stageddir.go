package tables

import (
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// prepareStagedMetadataDir creates a staged table's metadata directory when
// it is on the local file system. A staged create writes nothing, but some
// engines (DuckDB's CTAS) write manifests under it before the commit that
// creates the table, and a local file system, unlike an object store, has
// no implicit directories. An uncommitted stage leaves the empty directory
// behind, as a failed engine write would. 500 when it cannot be created.
func prepareStagedMetadataDir(w *store.Warehouse, tableLoc string, props map[string]string) error {
	dir, err := storagepath.Normalize(path.Dir(tableaccess.NewMetadataLocation(tableLoc, props, "")))
	if err != nil || !strings.HasPrefix(dir, "file:///") || !locations.TablePrefixes(w, tableLoc).Contains(dir) {
		return nil // object stores need no directory; checkWritePaths vetted the rest
	}
	u, err := url.Parse(dir)
	if err != nil {
		return nil
	}
	if err := os.MkdirAll(u.Path, 0o755); err != nil {
		return fault.Wrap(fault.Internal, err, "Failed to create the metadata directory %s", locations.FileName(w, tableLoc, dir))
	}
	return nil
}
