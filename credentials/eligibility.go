package credentials

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Reason is one cause of a fallback from Comet's native Parquet writer.
// Key names the property, column or partition field that causes it.
type Reason struct {
	Code    string `json:"code"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// Eligibility says whether a table keeps Comet's native writer eligible
// (Reasons lists every cause of a fallback), and what a native write of an
// eligible table can get wrong (Warnings, in the shape of a Reason).
type Eligibility struct {
	Eligible bool     `json:"eligible"`
	Reasons  []Reason `json:"reasons"`
	Warnings []Reason `json:"warnings"`
}

// Column is one schema field, nested ones included, as the check needs it.
type Column struct {
	ID   int
	Name string // dotted path, e.g. "point.x"
	Type string // Iceberg type string, e.g. "double", "timestamp_ns", "geometry(...)"
}

// PartitionField is one field of the table's default partition spec.
type PartitionField struct {
	Name      string
	Transform string // e.g. "identity", "bucket[4]", "void"
	SourceIDs []int
}

// TableShape is what decides native-write eligibility: the table's format
// version, location, properties, current schema and default spec.
type TableShape struct {
	FormatVersion int
	Location      string
	Properties    map[string]string
	Columns       []Column
	Partition     []PartitionField
}

// vettedParquetKeys are write.parquet.* table properties the native writer
// honours; any other write.parquet.* key makes it fall back.
var vettedParquetKeys = map[string]bool{
	"write.parquet.compression-codec": true, "write.parquet.compression-level": true,
	"write.parquet.row-group-size-bytes": true, "write.parquet.page-size-bytes": true,
	"write.parquet.page-row-limit": true, "write.parquet.dict-size-bytes": true,
	"write.parquet.row-group-check-min-record-count": true, "write.parquet.row-group-check-max-record-count": true,
	"write.parquet.page-version": true, "write.parquet.shred-variants": true,
	// Only read when shredding, which is gated on its own.
	"write.parquet.variant-inference-buffer-size": true,
}

// levelRange is the compression level the native writer accepts per codec;
// codecs absent here ignore the level in both writers.
var levelRange = map[string][2]int64{"zstd": {1, 22}, "gzip": {0, 9}, "brotli": {0, 11}}

// NativeWriteEligibility checks a table against the rules that make Comet
// 1.2.0's native Parquet writer fall back to iceberg-java (its "Native
// Parquet write eligibility" allowlist), plus the FileIO keys the catalog
// vends. Every reason is listed, each naming the property, column or
// partition field at fault. A v3 table is eligible: appends, overwrites and
// CTAS run natively; only its row-rewriting writes (copy-on-write DELETE,
// UPDATE, MERGE) carry row lineage and fall back, which a table-level
// verdict cannot express.
func NativeWriteEligibility(t TableShape, vended map[string]string) Eligibility {
	var rs, ws []Reason
	add := func(code, key, format string, args ...any) {
		rs = append(rs, Reason{Code: code, Key: key, Message: fmt.Sprintf(format, args...)})
	}
	warn := func(code, key, format string, args ...any) {
		ws = append(ws, Reason{Code: code, Key: key, Message: fmt.Sprintf(format, args...)})
	}
	checkLocation(t.Location, add)
	if t.FormatVersion > 3 {
		add("format-version", "format-version", "format-version=%d: Comet writes format versions 1 to 3 only", t.FormatVersion)
	}
	for _, k := range sortedKeys(t.Properties) {
		checkProperty(k, t.Properties[k], t.Properties, add)
	}
	checkColumns(t.Columns, add)
	checkPartition(t.Columns, t.Partition, add, warn)
	if strings.EqualFold(vended["s3.remote-signing-enabled"], "true") {
		add("remote-signing", "s3.remote-signing-enabled", "the catalog has engines sign this table's S3 requests through it "+
			"(remote signing), which the native writer does not do: Comet falls back to iceberg-java")
		warn("remote-signing-native-scan", "s3.remote-signing-enabled", "Comet's native Iceberg scan does not sign through "+
			"the catalog either, and fails to read this table (\"failed to load signing credential\"): set "+
			"spark.comet.scan.icebergNative.enabled=false in sessions that read it")
	}
	for _, k := range sortedKeys(vended) {
		if signingKeys[k] {
			continue // reported once, above
		}
		if !allowed(k, vended[k], false) {
			add("vended-key", k, "the catalog vends %s, which the native writer does not accept", k)
		}
	}
	if rs == nil {
		rs = []Reason{}
	}
	if ws == nil {
		ws = []Reason{}
	}
	return Eligibility{Eligible: len(rs) == 0, Reasons: rs, Warnings: ws}
}

type addFunc func(code, key, format string, args ...any)

// checkLocation: file, memory, s3, s3a and gs, spelled in lowercase; the
// object-store schemes need a bucket in the authority.
func checkLocation(loc string, add addFunc) {
	scheme, rest, ok := strings.Cut(loc, "://")
	switch {
	case !ok:
		add("location-scheme", "location", "the table location has no scheme://; the native writer needs file, memory, s3, s3a or gs")
	case scheme == "file" || scheme == "memory":
	case scheme == "s3" || scheme == "s3a" || scheme == "gs":
		if bucket, _, _ := strings.Cut(rest, "/"); bucket == "" {
			add("location-scheme", "location", "the table location %s:// has no bucket in the authority", scheme)
		}
	default:
		add("location-scheme", "location", "location scheme %q is not written natively (only file, memory, s3, s3a, gs, lowercase)", scheme)
	}
}

// checkProperty applies the property rules to one table property.
func checkProperty(k, v string, props map[string]string, add addFunc) {
	switch {
	case k == "format-version":
	case k == "write.format.default" && !strings.EqualFold(v, "parquet"):
		add("file-format", k, "write.format.default=%s: only Parquet is written natively", v)
	case k == "write.object-storage.enabled" && strings.EqualFold(v, "true"):
		add("object-storage-layout", k, "write.object-storage.enabled=true: the object-storage layout is not written natively")
	case k == "write.location-provider.impl":
		add("location-provider", k, "write.location-provider.impl is set: a custom location provider is not supported")
	case k == "io-impl":
		add("custom-file-io", k, "io-impl is set: a custom FileIO is not supported")
	case strings.HasPrefix(k, "encryption."):
		add("encryption", k, "%s is set: encrypted tables are not written natively", k)
	case strings.HasPrefix(k, "parquet."):
		add("parquet-mr-property", k, "%s reaches parquet-mr only", k)
	case strings.HasPrefix(k, "write.parquet.bloom-filter-enabled.column."):
		if strings.EqualFold(v, "true") {
			add("bloom-filter", k, "%s=true: bloom filters are not written natively", k)
		}
	case k == "write.parquet.page-version" && v != "v1":
		add("page-version", k, "write.parquet.page-version=%s (only v1)", v)
	case k == "write.parquet.shred-variants" && strings.EqualFold(v, "true"): // Java's parseBoolean
		add("variant-shredding", k, "write.parquet.shred-variants=%s: variant shredding is not written natively", v)
	case k == "write.parquet.row-group-check-min-record-count" && v != "100",
		k == "write.parquet.row-group-check-max-record-count" && v != "10000":
		add("row-group-cadence", k, "%s=%s (only the default)", k, v)
	case k == "write.parquet.compression-level":
		checkLevel(v, props["write.parquet.compression-codec"], add)
	case strings.HasPrefix(k, "write.parquet.") && !vettedParquetKeys[k]:
		add("unvetted-parquet-property", k, "%s is not vetted for the native writer", k)
	case strings.HasSuffix(k, "-bytes") && vettedParquetKeys[k], k == "write.parquet.page-row-limit":
		if n, err := strconv.ParseInt(v, 10, 32); err != nil || n <= 0 {
			add("invalid-size", k, "%s=%s is not a positive 32-bit integer", k, v)
		}
	}
}

// checkLevel: a Java int within the codec's range; Iceberg's default codec
// is zstd.
func checkLevel(v, codec string, add addFunc) {
	const k = "write.parquet.compression-level"
	if codec == "" {
		codec = "zstd"
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		add("compression-level", k, "%s=%s is not a 32-bit integer", k, v)
		return
	}
	if r, ok := levelRange[strings.ToLower(codec)]; ok && (n < r[0] || n > r[1]) {
		add("compression-level", k, "%s=%d is outside %d..%d for %s", k, n, r[0], r[1], strings.ToLower(codec))
	}
}

// unsupportedTypes are column types the native writer cannot produce.
var unsupportedTypes = []string{"uuid", "variant", "unknown", "timestamp_ns", "timestamptz_ns", "geometry", "geography"}

func checkColumns(cols []Column, add addFunc) {
	for _, c := range cols {
		for _, u := range unsupportedTypes {
			if c.Type == u || strings.HasPrefix(c.Type, u+"(") {
				add("column-type", c.Name, "column %s has type %s, which the native writer does not write", c.Name, c.Type)
			}
		}
	}
}

// checkPartition: a void field whose source column is gone beside a live
// field falls back (iceberg-java cannot write it either). Comet 1.2.0 does
// write identity partitions on float and double natively (its docs list a
// fallback that later releases add, because iceberg-rust puts -0.0 and 0.0
// in one partition): the report says what 1.2.0 does, eligible, and warns
// of the merged partition.
func checkPartition(cols []Column, spec []PartitionField, add, warn addFunc) {
	byID := make(map[int]Column, len(cols))
	for _, c := range cols {
		byID[c.ID] = c
	}
	live := false
	for _, f := range spec {
		if f.Transform != "void" {
			live = true
		}
	}
	for _, f := range spec {
		for _, id := range f.SourceIDs {
			c, ok := byID[id]
			if f.Transform == "void" && !ok && live {
				add("void-partition-dropped-source", f.Name, "partition field %s is void on a dropped column beside live fields", f.Name)
			}
			if f.Transform == "identity" && ok && (c.Type == "float" || c.Type == "double") {
				warn("float-identity-partition", f.Name, "partition field %s is an identity partition on %s column %s: Comet 1.2.0 "+
					"writes it natively, but its writer (iceberg-rust) puts -0.0 and 0.0 in one partition where iceberg-java writes two, "+
					"so a read that prunes on the other value can miss rows (apache/iceberg-rust#3325); later Comet releases fall back here. "+
					"Partition on another column or transform for tables Comet writes", f.Name, c.Type, c.Name)
			}
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
