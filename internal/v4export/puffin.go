package v4export

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/puffin"
)

// DV is one deletion vector blob for a new Puffin file.
type DV struct {
	// Blob is the deletion-vector-v1 blob as stored (length, magic,
	// bitmap, checksum): it names no file, so it moves unchanged.
	Blob        []byte
	Cardinality int64
	// ReferencedDataFile is the data file the vector deletes from, in
	// the new table.
	ReferencedDataFile string
}

// Placed is where a blob landed in the new Puffin file.
type Placed struct {
	Offset, Length int64
}

// PuffinOfDVs writes dvs as the deletion-vector-v1 blobs of one Puffin
// file. A copied Puffin file would keep the source's paths in each blob's
// referenced-data-file property, which some readers (PyIceberg) match
// data files by; the new file names the copies. An error means a blob
// could not be added (none is expected for in-memory output).
func PuffinOfDVs(dvs []DV) ([]byte, []Placed, error) {
	var buf bytes.Buffer
	w, err := puffin.NewWriter(&buf)
	if err != nil {
		return nil, nil, err
	}
	placed := make([]Placed, len(dvs))
	for i, d := range dvs {
		meta, err := w.AddBlob(puffin.BlobMetadataInput{Type: puffin.BlobTypeDeletionVector, SnapshotID: -1, SequenceNumber: -1,
			Fields: []int32{}, Properties: map[string]string{
				"referenced-data-file": d.ReferencedDataFile,
				"cardinality":          strconv.FormatInt(d.Cardinality, 10),
			}}, d.Blob)
		if err != nil {
			return nil, nil, fmt.Errorf("deletion vector of %s: %w", d.ReferencedDataFile, err)
		}
		placed[i] = Placed{Offset: meta.Offset, Length: meta.Length}
	}
	if err := w.Finish(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), placed, nil
}
