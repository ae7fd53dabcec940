// Package locations is the catalog's location policy (docs/design.md,
// "Locations"): which prefixes a warehouse and a table own, where a new
// table or view goes, which locations a table's metadata may name, and how
// a file is named in messages without leaking paths outside the
// warehouse. Every function is pure, over the warehouse row it is given:
// nothing here reads the store or storage, so every room can ask.
package locations

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// The location policy (docs/design.md, "Locations"): every location the
// catalog stores, reads, writes, vends credentials for or deletes is
// normalised first and must lie inside an allowed prefix. A warehouse's
// prefixes are its location plus the extra prefixes of its
// allowed-locations property; a table's are its own location plus those
// extras. Messages never carry a location from outside these prefixes.

// AllowedLocationsKey is the warehouse property listing extra prefixes
// (comma-separated) where its tables may live and write. Empty by default.
const AllowedLocationsKey = "allowed-locations"

// MetadataPathKey is the table property that directs where metadata files
// go (the service writes them there).
const MetadataPathKey = "write.metadata.path"

// ExtraPrefixes returns a warehouse's allowed-locations, canonical. An
// entry that does not normalise is ignored: creating a warehouse refuses
// it, so only a row written before the policy can have one, and ignoring
// it only narrows what is allowed.
func ExtraPrefixes(w *store.Warehouse) storagepath.Set {
	var out storagepath.Set
	for _, p := range strings.Split(w.Properties[AllowedLocationsKey], ",") {
		if n, err := storagepath.Normalize(strings.TrimSpace(p)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// WarehousePrefixes returns the warehouse location and its extra prefixes.
func WarehousePrefixes(w *store.Warehouse) storagepath.Set {
	out := ExtraPrefixes(w)
	if n, err := storagepath.Normalize(w.Location); err == nil {
		out = append(storagepath.Set{n}, out...)
	}
	return out
}

// dataPathKeys are the table properties that direct where data files go,
// in the order Iceberg's location provider reads them (the last two are
// older names of the first).
var dataPathKeys = []string{"write.data.path", "write.object-storage.path", "write.folder-storage.path"}

// writePathKeys are the table properties that direct where files go.
var writePathKeys = append([]string{MetadataPathKey}, dataPathKeys...)

// DataLocation is where the catalog writes a table's new data files
// (compaction), as Iceberg's location provider picks it: write.data.path,
// else the object-storage and folder-storage paths (older names of the
// same setting), else the table location's data/ directory. Commits vet
// these properties with CheckWritePaths, so the result lies inside the
// table's prefixes.
func DataLocation(tableLoc string, props map[string]string) string {
	for _, k := range dataPathKeys {
		if v := strings.TrimRight(props[k], "/"); v != "" {
			return v
		}
	}
	return strings.TrimRight(tableLoc, "/") + "/data"
}

// TablePrefixes returns where a table (or view) at tableLoc may have
// files: its location, when that lies inside the warehouse, plus the
// warehouse's extra prefixes. A location outside the warehouse (a row from
// before the policy) contributes nothing.
func TablePrefixes(w *store.Warehouse, tableLoc string) storagepath.Set {
	out := ExtraPrefixes(w)
	if n, err := storagepath.Normalize(tableLoc); err == nil && WarehousePrefixes(w).ContainsBelow(n) {
		out = append(storagepath.Set{n}, out...)
	}
	return out
}

// CheckObjectLocation validates the location of a new or moved table or
// view and returns it canonical: 400 when it does not normalise or is not
// strictly inside one of the warehouse's prefixes. The message does not
// echo the location.
func CheckObjectLocation(w *store.Warehouse, loc string) (string, error) {
	n, err := storagepath.Normalize(loc)
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
	if !WarehousePrefixes(w).ContainsBelow(n) {
		return "", fault.New(fault.BadRequest, "Invalid location: it must be inside the warehouse location (or a prefix listed in its %s)", AllowedLocationsKey)
	}
	return n, nil
}

// NewObjectLocation is where a table or view being created goes: given,
// else the default under its namespace. It returns the location in the
// client's spelling less any trailing slash (engines compare the location
// they asked for; the metadata keeps it) and the canonical form the checks
// and the store use, after checking both it and the write.*.path
// properties in props. Errors: CheckObjectLocation's and CheckWritePaths'
// 400s.
func NewObjectLocation(w *store.Warehouse, ns *store.Namespace, name, given string, props map[string]string) (loc, canon string, err error) {
	loc = given
	if loc == "" {
		loc = DefaultLocation(w, ns, name)
	}
	if canon, err = CheckObjectLocation(w, loc); err != nil {
		return "", "", err
	}
	if err := CheckWritePaths(w, canon, props); err != nil {
		return "", "", err
	}
	return strings.TrimRight(loc, "/"), canon, nil
}

// CheckWritePaths checks the write.*.path properties of a table or view at
// tableLoc: each one set must normalise and lie inside the table's
// prefixes. 400 naming the property otherwise.
func CheckWritePaths(w *store.Warehouse, tableLoc string, props map[string]string) error {
	allowed := TablePrefixes(w, tableLoc)
	for _, k := range writePathKeys {
		v, ok := props[k]
		if !ok || v == "" {
			continue
		}
		if _, err := storagepath.Normalize(v); err != nil {
			return fault.Wrap(fault.BadRequest, err, "Invalid %s: %v", k, err)
		}
		if !allowed.Contains(v) {
			return fault.New(fault.BadRequest, "Invalid %s: it must be inside the table location", k)
		}
	}
	return nil
}

// CheckTableMetadataLocations checks every location table metadata names
// that the catalog may later write, read or delete: the table location
// (inside the warehouse), the write.*.path properties, and each snapshot's
// manifest list and each statistics and partition-statistics file (inside
// the table's prefixes). It returns a 400 naming the property or the
// snapshot, never the offending path. Commits call it before the swap.
func CheckTableMetadataLocations(w *store.Warehouse, meta table.Metadata) error {
	loc, err := CheckObjectLocation(w, meta.Location())
	if err != nil {
		return err
	}
	if err := CheckWritePaths(w, loc, meta.Properties()); err != nil {
		return err
	}
	allowed := TablePrefixes(w, loc)
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

// CheckFileInTable checks a file a commit adds or references (a data,
// delete, column or deletion-vector file, a manifest): it must lie inside
// the table's prefixes. what names the file's role in the 400 message.
func CheckFileInTable(w *store.Warehouse, tableLoc, loc, what string) error {
	if !TablePrefixes(w, tableLoc).Contains(loc) {
		return fault.New(fault.BadRequest, "Invalid %s: it must be inside the table location", what)
	}
	return nil
}

// FileName names loc for messages and logs: relative to base when inside
// it, else relative to the warehouse location or one of its extra
// prefixes, else only by its last segment (a path outside the warehouse
// never appears whole).
func FileName(w *store.Warehouse, base, loc string) string {
	if rel, ok := storagepath.Rel(base, loc); ok && rel != "" {
		return rel
	}
	if rel, ok := storagepath.Rel(w.Location, loc); ok {
		return "<warehouse>/" + rel
	}
	for _, p := range ExtraPrefixes(w) {
		if rel, ok := storagepath.Rel(p, loc); ok {
			return "<" + AllowedLocationsKey + ">/" + rel
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

// DefaultLocation places a new table or view under its namespace's
// `location` property, or under the warehouse as <wh>/<ns levels>/. A
// unique suffix keeps a re-created name from landing in a renamed table's
// directory (locations never overlap). Levels and name become safe path
// segments, so that a level such as ".." cannot leave the warehouse; the
// caller still checks the result (the namespace property is client input).
func DefaultLocation(w *store.Warehouse, ns *store.Namespace, name string) string {
	base := ns.Properties["location"]
	if base == "" {
		levels := make([]string, len(ns.Levels))
		for i, l := range ns.Levels {
			levels[i] = safeSegment(l)
		}
		base = w.Location + "/" + strings.Join(levels, "/")
	}
	return strings.TrimRight(base, "/") + "/" + safeSegment(name) + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")
}

// TableFileName names a file for a message: relative to the table when
// inside it, else by its last segment only (no server path).
func TableFileName(tableLoc, loc string) string {
	rel := v4manifest.Relativize(tableLoc, loc)
	if v4manifest.IsAbsolute(rel) || strings.HasPrefix(rel, "/") {
		return "<outside>/" + path.Base(rel)
	}
	return rel
}
