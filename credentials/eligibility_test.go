package credentials

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// plainShape is an eligible v2 table: long id, string name, bucket on id.
func plainShape(loc string) TableShape {
	return TableShape{
		FormatVersion: 2, Location: loc, Properties: map[string]string{"owner": "me"},
		Columns:   []Column{{ID: 1, Name: "id", Type: "long"}, {ID: 2, Name: "name", Type: "string"}},
		Partition: []PartitionField{{Name: "id_bucket", Transform: "bucket[4]", SourceIDs: []int{1}}},
	}
}

// TestNativeWriteEligibility pins each rule of Comet 1.2.0's allowlist: a
// row either stays eligible or fails with exactly the expected code and
// key, so a rule that fires too widely or not at all fails here.
func TestNativeWriteEligibility(t *testing.T) {
	type change func(*TableShape)
	prop := func(k, v string) change { return func(s *TableShape) { s.Properties[k] = v } }
	loc := func(l string) change { return func(s *TableShape) { s.Location = l } }
	col := func(typ string) change {
		return func(s *TableShape) { s.Columns = append(s.Columns, Column{ID: 9, Name: "c", Type: typ}) }
	}
	part := func(tr string, typ string) change {
		return func(s *TableShape) {
			s.Columns = append(s.Columns, Column{ID: 9, Name: "c", Type: typ})
			s.Partition = append(s.Partition, PartitionField{Name: "p", Transform: tr, SourceIDs: []int{9}})
		}
	}
	cases := []struct {
		name      string
		change    change
		code, key string // "" = eligible
	}{
		{"plain s3", nil, "", ""},
		{"file scheme", loc("file:///tmp/wh/t"), "", ""},
		{"memory scheme", loc("memory://wh/t"), "", ""},
		{"s3a scheme", loc("s3a://b/t"), "", ""},
		{"gs scheme", loc("gs://b/t"), "", ""},
		{"upper-case scheme", loc("S3://b/t"), "location-scheme", "location"},
		{"hostless s3", loc("s3:///t"), "location-scheme", "location"},
		{"gcs scheme", loc("gcs://b/t"), "location-scheme", "location"},
		{"no scheme", loc("/tmp/t"), "location-scheme", "location"},
		{"format v1", func(s *TableShape) { s.FormatVersion = 1 }, "", ""},
		{"format v3", func(s *TableShape) { s.FormatVersion = 3 }, "", ""},
		{"format v4", func(s *TableShape) { s.FormatVersion = 4 }, "format-version", "format-version"},
		{"metrics counts", prop("write.metadata.metrics.default", "counts"), "", ""},
		{"metrics none on a column", prop("write.metadata.metrics.column.id", "none"), "", ""},
		{"parquet format upper-case", prop("write.format.default", "PARQUET"), "", ""},
		{"orc", prop("write.format.default", "orc"), "file-format", "write.format.default"},
		{"object storage", prop("write.object-storage.enabled", "true"), "object-storage-layout", "write.object-storage.enabled"},
		{"object storage off", prop("write.object-storage.enabled", "false"), "", ""},
		{"location provider", prop("write.location-provider.impl", "x.Y"), "location-provider", "write.location-provider.impl"},
		{"io-impl", prop("io-impl", "x.IO"), "custom-file-io", "io-impl"},
		{"encryption key", prop("encryption.key-id", "k"), "encryption", "encryption.key-id"},
		{"parquet-mr key", prop("parquet.enable.dictionary", "false"), "parquet-mr-property", "parquet.enable.dictionary"},
		{"bloom on", prop("write.parquet.bloom-filter-enabled.column.id", "true"), "bloom-filter", "write.parquet.bloom-filter-enabled.column.id"},
		{"bloom off", prop("write.parquet.bloom-filter-enabled.column.id", "false"), "", ""},
		{"page v1", prop("write.parquet.page-version", "v1"), "", ""},
		{"page v2", prop("write.parquet.page-version", "v2"), "page-version", "write.parquet.page-version"},
		{"shredding", prop("write.parquet.shred-variants", "true"), "variant-shredding", "write.parquet.shred-variants"},
		{"no shredding", prop("write.parquet.shred-variants", "false"), "", ""},
		{"inference buffer", prop("write.parquet.variant-inference-buffer-size", "x"), "", ""},
		{"min cadence default", prop("write.parquet.row-group-check-min-record-count", "100"), "", ""},
		{"min cadence", prop("write.parquet.row-group-check-min-record-count", "50"), "row-group-cadence", "write.parquet.row-group-check-min-record-count"},
		{"max cadence", prop("write.parquet.row-group-check-max-record-count", "5"), "row-group-cadence", "write.parquet.row-group-check-max-record-count"},
		{"unvetted", prop("write.parquet.bloom-filter-max-bytes", "1"), "unvetted-parquet-property", "write.parquet.bloom-filter-max-bytes"},
		{"codec", prop("write.parquet.compression-codec", "snappy"), "", ""},
		{"row group size", prop("write.parquet.row-group-size-bytes", "134217728"), "", ""},
		{"negative size", prop("write.parquet.page-size-bytes", "-1"), "invalid-size", "write.parquet.page-size-bytes"},
		{"size past int32", prop("write.parquet.dict-size-bytes", "2147483648"), "invalid-size", "write.parquet.dict-size-bytes"},
		{"padded size", prop("write.parquet.page-row-limit", " 5"), "invalid-size", "write.parquet.page-row-limit"},
		{"zstd level", prop("write.parquet.compression-level", "22"), "", ""},
		{"zstd level too high", prop("write.parquet.compression-level", "23"), "compression-level", "write.parquet.compression-level"},
		{"level not a number", prop("write.parquet.compression-level", "x"), "compression-level", "write.parquet.compression-level"},
		{"gzip level", func(s *TableShape) {
			s.Properties["write.parquet.compression-codec"] = "gzip"
			s.Properties["write.parquet.compression-level"] = "10"
		}, "compression-level", "write.parquet.compression-level"},
		{"snappy ignores level", func(s *TableShape) {
			s.Properties["write.parquet.compression-codec"] = "snappy"
			s.Properties["write.parquet.compression-level"] = "99"
		}, "", ""},
		{"uuid column", col("uuid"), "column-type", "c"},
		{"variant column", col("variant"), "column-type", "c"},
		{"unknown column", col("unknown"), "column-type", "c"},
		{"timestamp_ns column", col("timestamp_ns"), "column-type", "c"},
		{"timestamptz_ns column", col("timestamptz_ns"), "column-type", "c"},
		{"geometry column", col("geometry(srid:4326)"), "column-type", "c"},
		{"geography column", col("geography"), "column-type", "c"},
		{"decimal column", col("decimal(38, 2)"), "", ""},
		{"timestamptz column", col("timestamptz"), "", ""},
		// Comet 1.2.0 writes these natively (later releases fall back);
		// TestFloatIdentityWarning checks their warning.
		{"identity on double", part("identity", "double"), "", ""},
		{"identity on float", part("identity", "float"), "", ""},
		{"bucket on double", part("bucket[2]", "double"), "", ""},
		{"identity on date", part("identity", "date"), "", ""},
		{"void on dropped column", func(s *TableShape) {
			s.Partition = append(s.Partition, PartitionField{Name: "gone", Transform: "void", SourceIDs: []int{42}})
		}, "void-partition-dropped-source", "gone"},
		{"all void", func(s *TableShape) {
			s.Partition = []PartitionField{{Name: "gone", Transform: "void", SourceIDs: []int{42}}}
		}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := plainShape("s3://b/ns/t")
			if c.change != nil {
				c.change(&s)
			}
			got := NativeWriteEligibility(s, nil)
			if c.code == "" {
				require.True(t, got.Eligible, "%v", got.Reasons)
				require.Empty(t, got.Reasons)
				return
			}
			require.False(t, got.Eligible)
			require.Len(t, got.Reasons, 1, "%v", got.Reasons)
			require.Equal(t, c.code, got.Reasons[0].Code)
			require.Equal(t, c.key, got.Reasons[0].Key)
			require.Contains(t, got.Reasons[0].Message, c.key, "the message names what is at fault")
		})
	}
}

// TestFloatIdentityWarning: an identity partition on a float or double
// column stays eligible (Comet 1.2.0 writes it) with a warning naming the
// field, the column and the upstream issue; other transforms and types do
// not warn, and the warnings list is never null.
func TestFloatIdentityWarning(t *testing.T) {
	shape := func(transform, typ string) TableShape {
		s := plainShape("s3://b/ns/t")
		s.Columns = append(s.Columns, Column{ID: 3, Name: "score", Type: typ})
		s.Partition = append(s.Partition, PartitionField{Name: "score_p", Transform: transform, SourceIDs: []int{3}})
		return s
	}
	for _, typ := range []string{"float", "double"} {
		got := NativeWriteEligibility(shape("identity", typ), nil)
		require.True(t, got.Eligible, "%v", got.Reasons)
		require.Len(t, got.Warnings, 1)
		w := got.Warnings[0]
		require.Equal(t, "float-identity-partition", w.Code)
		require.Equal(t, "score_p", w.Key)
		for _, s := range []string{"score_p", typ + " column score", "-0.0 and 0.0", "apache/iceberg-rust#3325"} {
			require.Contains(t, w.Message, s)
		}
	}
	for _, c := range [][2]string{{"bucket[4]", "double"}, {"truncate[2]", "float"}, {"identity", "decimal(9, 2)"}, {"identity", "long"}} {
		got := NativeWriteEligibility(shape(c[0], c[1]), nil)
		require.NotNil(t, got.Warnings)
		require.Empty(t, got.Warnings, "%s on %s", c[0], c[1])
	}
}

// TestNativeWriteEligibilityVendedKeys: vended keys outside the allowlist
// fall back; every reason is listed, not only the first.
func TestNativeWriteEligibilityVendedKeys(t *testing.T) {
	ok := NativeWriteEligibility(plainShape("s3://b/t"), map[string]string{"s3.access-key-id": "a", "client.region": "r"})
	require.True(t, ok.Eligible)
	bad := NativeWriteEligibility(plainShape("S3://b/t"), map[string]string{"s3.sse.type": "dsse-kms"})
	require.False(t, bad.Eligible)
	require.Len(t, bad.Reasons, 2)
	require.Equal(t, "location-scheme", bad.Reasons[0].Code)
	require.Equal(t, Reason{Code: "vended-key", Key: "s3.sse.type",
		Message: "the catalog vends s3.sse.type, which the native writer does not accept"}, bad.Reasons[1])
}

// TestNativeWriteEligibilityRemoteSigning: a table whose engines sign
// through the catalog is not eligible, for one reason (not one per key).
func TestNativeWriteEligibilityRemoteSigning(t *testing.T) {
	got := NativeWriteEligibility(plainShape("s3://b/t"), map[string]string{"s3.remote-signing-enabled": "true",
		"s3.signer": "S3V4RestSigner", "s3.signer.endpoint": "v1/wh/namespaces/ns/tables/t/sign",
		"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", "client.region": "r", "s3.endpoint": "http://s3"})
	require.False(t, got.Eligible)
	require.Len(t, got.Reasons, 1)
	require.Equal(t, "remote-signing", got.Reasons[0].Code)
	require.Equal(t, "s3.remote-signing-enabled", got.Reasons[0].Key)
	require.Len(t, got.Warnings, 1)
	require.Equal(t, "remote-signing-native-scan", got.Warnings[0].Code)
}

// FuzzNativeWriteEligibility: any property and location give a verdict
// that agrees with its reasons, and no reason quotes the location (it may
// be a server path).
func FuzzNativeWriteEligibility(f *testing.F) {
	f.Add("write.parquet.compression-level", "23", "s3://b/t")
	f.Add("write.format.default", "orc", "file:///x")
	f.Fuzz(func(t *testing.T, k, v, loc string) {
		s := plainShape(loc)
		s.Properties[k] = v
		got := NativeWriteEligibility(s, nil)
		require.Equal(t, len(got.Reasons) == 0, got.Eligible)
		for _, r := range got.Reasons {
			require.NotEmpty(t, r.Code)
			require.NotEmpty(t, r.Message)
			if len(loc) > 8 {
				require.NotContains(t, r.Message, loc)
			}
		}
	})
}
