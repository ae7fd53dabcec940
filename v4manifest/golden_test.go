package v4manifest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lakehold/catalog/internal/mumbling"
	"github.com/stretchr/testify/require"
)

// TestWriteGolden writes sample manifests for the interop tier, where
// pyarrow checks their field ids, types and repetition
// (integration/python/test_v4manifest.py). Skipped unless V4_GOLDEN_DIR is set.
func TestWriteGolden(t *testing.T) {
	dir := os.Getenv("V4_GOLDEN_DIR")
	if dir == "" {
		t.Skip("V4_GOLDEN_DIR not set: run by integration/run.sh")
	}
	sc := allTypesSchema()
	leaf := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, SchemaID: 3, Specs: twoSpecs(t, sc), TableLocation: "s3://b/t"}, sampleRows())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "leaf.parquet"), leaf, 0o644))
	mi := ComputeManifestInfo(sampleRows())
	// Leaf position 2 (the REPLACED row) masked: the root row carries a
	// manifest deletion vector and so dv_cardinality (523).
	dv, err := mumbling.Encode([]uint32{2})
	require.NoError(t, err)
	mi.DV = dv
	root := writeAll(t, WriterOptions{Content: ContentRoot, Schema: sc, Specs: twoSpecs(t, sc)}, []TrackedFile{{
		Tracking:    Tracking{Status: StatusAdded, SnapshotID: ptr(int64(9)), SequenceNumber: ptr(int64(9)), FileSequenceNumber: ptr(int64(9)), FirstRowID: ptr(int64(0))},
		ContentType: ContentDataManifest, FormatVersion: 4, Location: "s3://b/t/metadata/leaf.parquet", FileFormat: "parquet",
		RecordCount: 4, FileSizeInBytes: int64(len(leaf)), ManifestInfo: &mi,
	}})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "root.parquet"), root, 0o644))
}
