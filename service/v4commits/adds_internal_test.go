package v4commits

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/v4manifest"
)

// TestAddedFiles: the files rows of the root and of new leaves name
// (relative ones resolved against the table), with their deletion vectors
// and column files, once each; leaf manifests are left out.
func TestAddedFiles(t *testing.T) {
	const loc = "s3://b/wh/t"
	res := &v4tree.Result{
		Root: []v4manifest.TrackedFile{
			{ContentType: v4manifest.ContentDataManifest, Location: loc + "/metadata/leaf-1.parquet"},
			{ContentType: v4manifest.ContentData, Location: "data/root-row.parquet",
				DeletionVector: &v4manifest.DeletionVector{Location: loc + "/data/dv-1.puffin"}},
		},
		Leaves: []v4tree.Leaf{{Location: loc + "/metadata/leaf-1.parquet", Rows: []v4manifest.TrackedFile{
			{ContentType: v4manifest.ContentData, Location: loc + "/data/a.parquet",
				ColumnFiles: []v4manifest.ColumnFile{{Location: "data/a-col-3.parquet"}}},
			{ContentType: v4manifest.ContentEqualityDeletes, Location: loc + "/data/eq.parquet"},
			{ContentType: v4manifest.ContentData, Location: loc + "/data/a.parquet"},
		}}},
	}
	require.ElementsMatch(t, []string{
		loc + "/data/root-row.parquet", loc + "/data/dv-1.puffin", loc + "/data/a.parquet",
		loc + "/data/a-col-3.parquet", loc + "/data/eq.parquet",
	}, addedFiles(loc, res))
}
