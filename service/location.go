package service

import (
	"net/url"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/service/warehouses"
	"github.com/lakehold/catalog/store"
)

// The location policy (docs/design.md, "Locations"): every location the
// catalog stores, reads, writes, vends credentials for or deletes is
// normalised first and must lie inside an allowed prefix. A warehouse's
// prefixes are its location plus the extra prefixes of its
// allowed-locations property; a table's are its own location plus those
// extras. Messages never carry a location from outside these prefixes.

// allowedLocationsKey is the warehouse property listing extra prefixes
// (warehouses.AllowedLocationsKey).
const allowedLocationsKey = warehouses.AllowedLocationsKey

// dataPathKeys are the table properties that direct where data files go,
// in the order Iceberg's location provider reads them (the last two are
// older names of the first).
var dataPathKeys = []string{"write.data.path", "write.object-storage.path", "write.folder-storage.path"}

// writePathKeys are the table properties that direct where files go.
var writePathKeys = append([]string{metadataPathKey}, dataPathKeys...)

// dataLocation is where the catalog writes a table's new data files
// (compaction), as Iceberg's location provider picks it: write.data.path,
// else the object-storage and folder-storage paths (older names of the
// same setting), else the table location's data/ directory. Commits vet
// these properties with checkWritePaths, so the result lies inside the
// table's prefixes.
func dataLocation(tableLoc string, props map[string]string) string {
	for _, k := range dataPathKeys {
		if v := strings.TrimRight(props[k], "/"); v != "" {
			return v
		}
	}
	return strings.TrimRight(tableLoc, "/") + "/data"
}

// extraPrefixes returns a warehouse's allowed-locations, canonical
// (warehouses.ExtraPrefixes).
func extraPrefixes(w *store.Warehouse) location.Set { return warehouses.ExtraPrefixes(w) }

// warehousePrefixes returns the warehouse location and its extra prefixes
// (warehouses.Prefixes).
func warehousePrefixes(w *store.Warehouse) location.Set { return warehouses.Prefixes(w) }

// tablePrefixes returns where a table (or view) at tableLoc may have
// files: its location, when that lies inside the warehouse, plus the
// warehouse's extra prefixes. A location outside the warehouse (a row from
// before the policy) contributes nothing.
func tablePrefixes(w *store.Warehouse, tableLoc string) location.Set {
	out := extraPrefixes(w)
	if n, err := location.Normalize(tableLoc); err == nil && warehousePrefixes(w).ContainsBelow(n) {
		out = append(location.Set{n}, out...)
	}
	return out
}

// checkObjectLocation validates the location of a new or moved table or
// view and returns it canonical: 400 when it does not normalise or is not
// strictly inside one of the warehouse's prefixes. The message does not
// echo the location.
func checkObjectLocation(w *store.Warehouse, loc string) (string, error) {
	n, err := location.Normalize(loc)
	if err != nil {
		return "", fault.Wrap(fault.BadRequest, err, "Invalid location: %s", fault.ClientText(err))
	}
	if len(n) > maxLocationBytes {
		return "", fault.New(fault.BadRequest, "Invalid location: longer than %d bytes", maxLocationBytes)
	}
	for _, seg := range strings.Split(n, "/") {
		if len(seg) > maxSegmentBytes {
			return "", fault.New(fault.BadRequest, "Invalid location: a path segment is longer than %d bytes", maxSegmentBytes)
		}
	}
	if !warehousePrefixes(w).ContainsBelow(n) {
		return "", fault.New(fault.BadRequest, "Invalid location: it must be inside the warehouse location (or a prefix listed in its %s)", allowedLocationsKey)
	}
	return n, nil
}

// newObjectLocation is where a table or view being created goes: given,
// else the default under its namespace. It returns the location in the
// client's spelling less any trailing slash (engines compare the location
// they asked for; the metadata keeps it) and the canonical form the checks
// and the store use, after checking both it and the write.*.path
// properties in props. Errors: checkObjectLocation's and checkWritePaths'
// 400s.
func newObjectLocation(w *store.Warehouse, ns *store.Namespace, name, given string, props map[string]string) (loc, canon string, err error) {
	loc = given
	if loc == "" {
		loc = defaultLocation(w, ns, name)
	}
	if canon, err = checkObjectLocation(w, loc); err != nil {
		return "", "", err
	}
	if err := checkWritePaths(w, canon, props); err != nil {
		return "", "", err
	}
	return strings.TrimRight(loc, "/"), canon, nil
}

// checkWritePaths checks the write.*.path properties of a table or view at
// tableLoc: each one set must normalise and lie inside the table's
// prefixes. 400 naming the property otherwise.
func checkWritePaths(w *store.Warehouse, tableLoc string, props map[string]string) error {
	allowed := tablePrefixes(w, tableLoc)
	for _, k := range writePathKeys {
		v, ok := props[k]
		if !ok || v == "" {
			continue
		}
		if _, err := location.Normalize(v); err != nil {
			return fault.Wrap(fault.BadRequest, err, "Invalid %s: %v", k, err)
		}
		if !allowed.Contains(v) {
			return fault.New(fault.BadRequest, "Invalid %s: it must be inside the table location", k)
		}
	}
	return nil
}

// checkTableMetadataLocations checks every location table metadata names
// that the catalog may later write, read or delete: the table location
// (inside the warehouse), the write.*.path properties, and each snapshot's
// manifest list and each statistics and partition-statistics file (inside
// the table's prefixes). It returns a 400 naming the property or the
// snapshot, never the offending path. Commits call it before the swap.
func (s *Service) checkTableMetadataLocations(w *store.Warehouse, meta table.Metadata) error {
	loc, err := checkObjectLocation(w, meta.Location())
	if err != nil {
		return err
	}
	if err := checkWritePaths(w, loc, meta.Properties()); err != nil {
		return err
	}
	allowed := tablePrefixes(w, loc)
	for _, snap := range meta.Snapshots() {
		if snap.ManifestList != "" && !allowed.Contains(snap.ManifestList) {
			return fault.New(fault.BadRequest, "Invalid snapshot %d: its manifest-list must be inside the table location", snap.SnapshotID)
		}
	}
	for st := range meta.Statistics() {
		if !allowed.Contains(st.StatisticsPath) {
			return fault.New(fault.BadRequest, "Invalid statistics of snapshot %d: statistics-path must be inside the table location", st.SnapshotID)
		}
	}
	for st := range meta.PartitionStatistics() {
		if !allowed.Contains(st.StatisticsPath) {
			return fault.New(fault.BadRequest, "Invalid partition statistics of snapshot %d: statistics-path must be inside the table location", st.SnapshotID)
		}
	}
	return nil
}

// checkFileInTable checks a file a commit adds or references (a data,
// delete, column or deletion-vector file, a manifest): it must lie inside
// the table's prefixes. what names the file's role in the 400 message.
func checkFileInTable(w *store.Warehouse, tableLoc, loc, what string) error {
	if !tablePrefixes(w, tableLoc).Contains(loc) {
		return fault.New(fault.BadRequest, "Invalid %s: it must be inside the table location", what)
	}
	return nil
}

// fileName names loc for messages and logs: relative to base when inside
// it, else relative to the warehouse location or one of its extra
// prefixes, else only by its last segment (a path outside the warehouse
// never appears whole).
func fileName(w *store.Warehouse, base, loc string) string {
	if rel, ok := location.Rel(base, loc); ok && rel != "" {
		return rel
	}
	if rel, ok := location.Rel(w.Location, loc); ok {
		return "<warehouse>/" + rel
	}
	for _, p := range extraPrefixes(w) {
		if rel, ok := location.Rel(p, loc); ok {
			return "<" + allowedLocationsKey + ">/" + rel
		}
	}
	return "<outside>/" + path.Base(loc)
}

// Location size limits: a table's files sit a few segments below its
// location (metadata/<NNNNN>-<uuid>.metadata.json), and both file systems
// (255-byte names, 4096-byte paths) and object stores (1024-byte keys)
// bound what can be written there. A location over them would take the
// create and fail every write after it.
const (
	maxLocationBytes  = 900
	maxSegmentBytes   = 200
	maxDefaultSegment = 160 // + "-" + 32 hex digits of the default suffix
)

// safeSegment turns a namespace level or name into one path segment that
// normalises: characters that would split, escape or query the path become
// '_', and "." or ".." are replaced; long names are cut (at a UTF-8
// boundary) so that the segment plus a table's random suffix stays under
// file-system name limits. Uniqueness is not needed: default table
// locations end in a random suffix.
func safeSegment(s string) string {
	if len(s) > maxDefaultSegment {
		cut := maxDefaultSegment
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c == 0x7f || strings.IndexByte(`/\?#%`, c) >= 0 {
			b[i] = '_'
		}
	}
	if out := string(b); out != "." && out != ".." {
		return out
	}
	return strings.Repeat("_", len(b))
}

// prepareStagedMetadataDir creates a staged table's metadata directory when
// it is on the local file system. A staged create writes nothing, but some
// engines (DuckDB's CTAS) write manifests under it before the commit that
// creates the table, and a local file system, unlike an object store, has
// no implicit directories. An uncommitted stage leaves the empty directory
// behind, as a failed engine write would. 500 when it cannot be created.
func prepareStagedMetadataDir(w *store.Warehouse, tableLoc string, props map[string]string) error {
	dir, err := location.Normalize(path.Dir(newMetadataLocation(tableLoc, props, "")))
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
