package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"
)

// dvBlob is a deletion vector written to a Puffin file inside a table.
type dvBlob struct {
	rel                       string // location relative to the table
	offset, size, cardinality int64
}

// writeDV writes a deletion vector for dataFile (absolute) deleting
// positions, with iceberg-go's DV writer (what PyIceberg-style writers use).
func writeDV(t *testing.T, vt *v4Table, rel, dataFile string, positions ...int64) dvBlob {
	t.Helper()
	w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	require.NoError(t, w.Add(dataFile, positions, 0, nil))
	files, err := w.Flush(context.Background(), vt.loc+"/"+rel)
	require.NoError(t, err)
	require.Len(t, files, 1)
	return dvBlob{rel: rel, offset: *files[0].ContentOffset(), size: *files[0].ContentSizeInBytes(), cardinality: files[0].Count()}
}

func (d dvBlob) request(dataFile string) map[string]any {
	return map[string]any{"data-file": dataFile, "location": d.rel, "offset": d.offset, "size-in-bytes": d.size, "cardinality": d.cardinality}
}

// TestDeletionVectorValidation: the server reads the Puffin file of a
// set-deletion-vectors request and refuses, with a reason code each, a
// request whose offset, size, cardinality, blob type, referenced data file
// or positions disagree with the file, or whose blob does not decode. A
// refused request changes nothing; the right one then lands.
func TestDeletionVectorValidation(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	vt := newV4Table(t, b, "dvs", map[string]int{"a.parquet": 3, "b.parquet": 3})
	a, bFile := vt.loc+"/data/a.parquet", vt.loc+"/data/b.parquet"
	good := writeDV(t, vt, "data/a-dv.puffin", a, 0, 2)
	ofB := writeDV(t, vt, "data/b-dv.puffin", bFile, 1)
	tooFar := writeDV(t, vt, "data/far-dv.puffin", a, 1, 3)
	require.NoError(t, os.WriteFile(filepath.Join(vt.dir, "data/junk.puffin"), []byte("not a puffin file at all, just bytes"), 0o644))

	// A Puffin file whose only blob is a theta sketch at the same range.
	f, err := os.Create(filepath.Join(vt.dir, "data/sketch.puffin"))
	require.NoError(t, err)
	pw, err := puffin.NewWriter(f)
	require.NoError(t, err)
	sketch, err := pw.AddBlob(puffin.BlobMetadataInput{Type: "apache-datasketches-theta-v1", Fields: []int32{1}}, make([]byte, 20))
	require.NoError(t, err)
	require.NoError(t, pw.Finish())
	require.NoError(t, f.Close())

	// The same DV with one byte of its bitmap flipped (checksum mismatch).
	raw, err := os.ReadFile(filepath.Join(vt.dir, good.rel))
	require.NoError(t, err)
	raw[good.offset+good.size-6] ^= 0xff
	require.NoError(t, os.WriteFile(filepath.Join(vt.dir, "data/flipped.puffin"), raw, 0o644))
	flipped := good
	flipped.rel = "data/flipped.puffin"

	edit := func(d dvBlob, fn func(*dvBlob)) dvBlob { fn(&d); return d }
	cases := []struct {
		name, reason string
		req          map[string]any
	}{
		{"missing-file", "deletion-vector-unreadable", edit(good, func(d *dvBlob) { d.rel = "data/nope.puffin" }).request("data/a.parquet")},
		{"not-puffin", "deletion-vector-unreadable", edit(good, func(d *dvBlob) { d.rel = "data/junk.puffin" }).request("data/a.parquet")},
		{"wrong-offset", "deletion-vector-blob-not-found", edit(good, func(d *dvBlob) { d.offset++ }).request("data/a.parquet")},
		{"wrong-size", "deletion-vector-blob-not-found", edit(good, func(d *dvBlob) { d.size-- }).request("data/a.parquet")},
		{"wrong-cardinality", "deletion-vector-cardinality-mismatch", edit(good, func(d *dvBlob) { d.cardinality = 1 }).request("data/a.parquet")},
		{"other-data-file", "deletion-vector-referenced-data-file", ofB.request("data/a.parquet")},
		{"blob-type", "deletion-vector-blob-type", dvBlob{rel: "data/sketch.puffin", offset: sketch.Offset, size: sketch.Length, cardinality: 1}.request("data/a.parquet")},
		{"corrupt", "deletion-vector-corrupt", flipped.request("data/a.parquet")},
		{"position-past-end", "deletion-vector-position-out-of-range", tooFar.request("data/a.parquet")},
	}
	before := b.do(t, "GET", vt.path, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := b.do(t, "POST", vt.path+"/files", map[string]any{"set-deletion-vectors": []any{c.req}})
			require.Equal(t, 400, r.status, "%s", r.body)
			e := r.json(t)["error"].(map[string]any)
			require.Equal(t, c.reason, e["reason"], "%s", r.body)
			require.NotContains(t, r.body, vt.dir, "no server path in the message")
		})
	}
	require.Equal(t, before.body, b.do(t, "GET", vt.path, nil).body, "refused requests changed the table")

	r := b.do(t, "POST", vt.path+"/files", map[string]any{"set-deletion-vectors": []any{good.request("data/a.parquet"), ofB.request("data/b.parquet")}})
	require.Equal(t, 200, r.status, "%s", r.body)
	row, _ := vt.liveRow(t, "a.parquet")
	require.NotNil(t, row.DeletionVector)
	require.Equal(t, int64(2), row.DeletionVector.Cardinality)
}
