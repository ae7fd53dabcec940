package validation

// Reason codes of a set-deletion-vectors request whose Puffin file does not
// say what the request says. The server reads the file instead of trusting
// the client: a wrong offset or cardinality would make every reader drop the
// wrong rows or fail.
const (
	ReasonDVUnreadable          = "deletion-vector-unreadable"
	ReasonDVBlobNotFound        = "deletion-vector-blob-not-found"
	ReasonDVBlobType            = "deletion-vector-blob-type"
	ReasonDVReferencedDataFile  = "deletion-vector-referenced-data-file"
	ReasonDVCardinalityMismatch = "deletion-vector-cardinality-mismatch"
	ReasonDVCorrupt             = "deletion-vector-corrupt"
	ReasonDVPositionOutOfRange  = "deletion-vector-position-out-of-range"
)

// DVBlobType is the Puffin blob type of an Iceberg deletion vector.
const DVBlobType = "deletion-vector-v1"

// DeletionVector is what a request says about one data file's deletion
// vector. Name is the data file as the client should read it in messages.
type DeletionVector struct {
	DataFile    string
	Name        string
	Offset      int64
	SizeInBytes int64
	Cardinality int64
}

// PuffinBlob is one entry of a Puffin footer. ReferencedDataFile is the
// blob's referenced-data-file property resolved against the table ("" when
// absent); Cardinality is its cardinality property (nil when absent or not
// a number).
type PuffinBlob struct {
	Type               string
	Offset             int64
	Length             int64
	Compressed         bool
	ReferencedDataFile string
	Cardinality        *int64
}

// MatchDVBlob finds the blob a deletion vector request points at in its
// Puffin file's footer and checks the footer's word against the request. It
// returns the index of the blob, or an *Error with reason
// deletion-vector-unreadable when the footer could not be read (readErr is
// a client-safe description), deletion-vector-blob-not-found when no blob
// starts at the offset with the given size, deletion-vector-blob-type for a
// blob that is not an uncompressed deletion-vector-v1, and
// deletion-vector-referenced-data-file or
// deletion-vector-cardinality-mismatch when its properties disagree.
func MatchDVBlob(dv DeletionVector, blobs []PuffinBlob, readErr string) (int, error) {
	details := map[string]any{"data-file": dv.Name}
	if readErr != "" {
		return -1, reject(ReasonDVUnreadable, details, "Deletion vector of %s: %s", dv.Name, readErr)
	}
	for i, b := range blobs {
		if b.Offset != dv.Offset {
			continue
		}
		if b.Length != dv.SizeInBytes {
			return -1, reject(ReasonDVBlobNotFound, details,
				"Deletion vector of %s: the blob at offset %d is %d bytes, not %d", dv.Name, dv.Offset, b.Length, dv.SizeInBytes)
		}
		if b.Type != DVBlobType || b.Compressed {
			return -1, reject(ReasonDVBlobType, details,
				"Deletion vector of %s: the blob at offset %d is %q, not an uncompressed %s", dv.Name, dv.Offset, b.Type, DVBlobType)
		}
		if b.ReferencedDataFile != "" && b.ReferencedDataFile != dv.DataFile {
			return -1, reject(ReasonDVReferencedDataFile, details,
				"Deletion vector of %s: the blob belongs to another data file", dv.Name)
		}
		if b.Cardinality != nil && *b.Cardinality != dv.Cardinality {
			return -1, reject(ReasonDVCardinalityMismatch, details,
				"Deletion vector of %s: the request says %d deleted rows, the blob's properties %d", dv.Name, dv.Cardinality, *b.Cardinality)
		}
		return i, nil
	}
	return -1, reject(ReasonDVBlobNotFound, details, "Deletion vector of %s: no blob starts at offset %d", dv.Name, dv.Offset)
}

// DecodedDV is what the server found in a deletion vector blob: its
// cardinality and largest position, or why it could not be decoded
// (DecodeErr, client-safe).
type DecodedDV struct {
	DecodeErr   string
	Cardinality int64
	MaxPosition int64
}

// CheckDVContent compares a decoded deletion vector with the request:
// deletion-vector-corrupt when it did not decode, and
// deletion-vector-cardinality-mismatch when it deletes another number of rows.
func CheckDVContent(dv DeletionVector, got DecodedDV) error {
	details := map[string]any{"data-file": dv.Name}
	if got.DecodeErr != "" {
		return reject(ReasonDVCorrupt, details, "Deletion vector of %s: %s", dv.Name, got.DecodeErr)
	}
	if got.Cardinality != dv.Cardinality {
		return reject(ReasonDVCardinalityMismatch, details,
			"Deletion vector of %s: the request says %d deleted rows, the blob holds %d", dv.Name, dv.Cardinality, got.Cardinality)
	}
	return nil
}

// CheckDVPositions fails with deletion-vector-position-out-of-range when a
// deletion vector deletes a position at or past the end of its data file
// (maxPosition -1 means it deletes nothing).
func CheckDVPositions(name string, maxPosition, recordCount int64) error {
	if maxPosition >= recordCount {
		return reject(ReasonDVPositionOutOfRange, map[string]any{"data-file": name},
			"Deletion vector of %s deletes position %d, but the file has %d rows", name, maxPosition, recordCount)
	}
	return nil
}
