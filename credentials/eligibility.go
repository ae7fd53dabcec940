package credentials

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Reason is one cause of a fallback from Comet's native Parquet writer.
type Reason struct {
	Code    string `json:"code"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// Eligibility says whether a table keeps Comet's native writer eligible.
type Eligibility struct {
	Eligible bool     `json:"eligible"`
	Reasons  []Reason `json:"reasons"`
}

// vettedParquetKeys are write.parquet.* table properties the native writer
// honours; any other write.parquet.* key makes it fall back.
var vettedParquetKeys = map[string]bool{
	"write.parquet.compression-codec": true, "write.parquet.compression-level": true,
	"write.parquet.row-group-size-bytes": true, "write.parquet.page-size-bytes": true,
	"write.parquet.page-row-limit": true, "write.parquet.dict-size-bytes": true,
	"write.parquet.row-group-check-min-record-count": true, "write.parquet.row-group-check-max-record-count": true,
	"write.parquet.page-version": true, "write.parquet.shred-variants": true,
}

// NativeWriteEligibility checks a table's effective properties, its format
// version, its location and the FileIO keys the catalog vends against the
// rules that make Comet's native Parquet writer fall back. Every reason is
// listed, not just the first.
func NativeWriteEligibility(formatVersion int, location string, props, vended map[string]string) Eligibility {
	var rs []Reason
	add := func(code, key, format string, args ...any) {
		rs = append(rs, Reason{Code: code, Key: key, Message: fmt.Sprintf(format, args...)})
	}
	if !(strings.HasPrefix(location, "s3://") || strings.HasPrefix(location, "s3a://") || strings.HasPrefix(location, "gs://")) {
		add("location-scheme", "", "table location %q is not s3://, s3a:// or gs:// with a lowercase scheme", location)
	} else if l := strings.SplitN(strings.SplitN(location, "://", 2)[1], "/", 2)[0]; l == "" {
		add("location-scheme", "", "table location %q has no bucket in the authority", location)
	}
	if formatVersion >= 3 {
		add("format-version", "format-version", "format version %d: row-lineage writes fall back (use 2)", formatVersion)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := props[k]
		switch {
		case k == "write.format.default" && !strings.EqualFold(v, "parquet"):
			add("file-format", k, "write.format.default=%s: only Parquet is written natively", v)
		case k == "write.object-storage.enabled" && strings.EqualFold(v, "true"):
			add("object-storage-layout", k, "the object-storage location layout is not supported")
		case k == "write.location-provider.impl":
			add("location-provider", k, "a custom location provider is not supported")
		case k == "io-impl":
			add("custom-file-io", k, "a custom FileIO (io-impl) is not supported")
		case strings.HasPrefix(k, "encryption."):
			add("encryption", k, "encrypted tables are not written natively")
		case strings.HasPrefix(k, "parquet."):
			add("parquet-mr-property", k, "%s reaches parquet-mr only", k)
		case strings.HasPrefix(k, "write.parquet.bloom-filter-enabled.column.") && strings.EqualFold(v, "true"):
			add("bloom-filter", k, "bloom filters are not written natively")
		case k == "write.parquet.page-version" && v != "v1":
			add("page-version", k, "page version %s (only v1)", v)
		case k == "write.parquet.shred-variants" && strings.EqualFold(v, "true"):
			add("variant-shredding", k, "variant shredding is not supported")
		case k == "write.parquet.row-group-check-min-record-count" && v != "100",
			k == "write.parquet.row-group-check-max-record-count" && v != "10000":
			add("row-group-cadence", k, "%s=%s (only the defaults)", k, v)
		case strings.HasPrefix(k, "write.parquet.") && !vettedParquetKeys[k]:
			add("unvetted-parquet-property", k, "%s is not vetted for the native writer", k)
		case vettedParquetKeys[k] && strings.HasSuffix(k, "-bytes") || k == "write.parquet.page-row-limit":
			if n, err := strconv.ParseInt(v, 10, 32); err != nil || n <= 0 {
				add("invalid-size", k, "%s=%s is not a positive int", k, v)
			}
		case strings.HasPrefix(k, "write.metadata.metrics.") && (v == "counts" || v == "none"):
			add("metrics-mode", k, "metrics mode %s (only full or truncate(N))", v)
		}
	}
	vk := make([]string, 0, len(vended))
	for k := range vended {
		vk = append(vk, k)
	}
	sort.Strings(vk)
	for _, k := range vk {
		if !allowed(k, vended[k], false) {
			add("vended-key", k, "the catalog vends %s, which the native writer does not accept", k)
		}
	}
	if rs == nil {
		rs = []Reason{}
	}
	return Eligibility{Eligible: len(rs) == 0, Reasons: rs}
}
