package service

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/v4manifest"
)

// TestV4CommitsTakeTheFastPath: a v4 files commit is built and encoded as
// every commit is: its metadata lands in the parsed-metadata cache (no
// parse on the next commit), and the snapshots it keeps are the previous
// document's bytes, not a re-encoding.
func TestV4CommitsTakeTheFastPath(t *testing.T) {
	ctx := context.Background()
	svc, id := newV4TestTable(t, Options{})
	var prev *tablemeta.Entry
	for i := 0; i < 4; i++ {
		res, err := svc.CommitFiles(ctx, "wh", FilesCommit{Ident: id, AddDataFiles: []DataFileInput{
			{Location: fmt.Sprintf("data/f%d.parquet", i), FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: 100,
				Stats: map[int]*v4manifest.FieldStats{1: {LowerBound: int64(10 * i), UpperBound: int64(10*i + 9)}}}}})
		require.NoError(t, err)
		e := svc.ta.CachedMeta(res.MetadataLocation)
		require.NotNil(t, e, "commit %d: the new metadata is cached", i)
		require.Equal(t, FormatV4, e.Version)
		require.Len(t, e.Meta.Snapshots(), i+1)
		require.Len(t, e.Spans, i+1, "commit %d: every snapshot located in the document", i)
		if prev != nil {
			for j := range prev.Spans {
				old := prev.Data[prev.Spans[j][0]:prev.Spans[j][1]]
				require.Equal(t, string(old), string(e.Data[e.Spans[j][0]:e.Spans[j][1]]), "commit %d: snapshot %d copied", i, j)
			}
		}
		require.True(t, bytes.Contains(e.Data, []byte(`"root-manifest"`)))
		prev = e
	}
}
