package v4read

import "github.com/lakehold/catalog/v4manifest"

// ColumnFileRef is a live column file of a base data file.
type ColumnFileRef struct {
	Location        string
	FileFormat      string
	FieldIDs        []int
	FileSizeInBytes int64
}

// DeletionVectorRef is the deletion vector of a data file: a blob of a
// Puffin file.
type DeletionVectorRef struct {
	Location    string
	Offset      int64
	SizeInBytes int64
	Cardinality int64
}

// ColumnFileRefs are the refs of a row's column files (nil for none).
func ColumnFileRefs(cfs []v4manifest.ColumnFile) []ColumnFileRef {
	if len(cfs) == 0 {
		return nil
	}
	out := make([]ColumnFileRef, len(cfs))
	for i, cf := range cfs {
		ids := make([]int, len(cf.FieldIDs))
		for j, id := range cf.FieldIDs {
			ids[j] = int(id)
		}
		out[i] = ColumnFileRef{Location: cf.Location, FileFormat: cf.FileFormat, FieldIDs: ids, FileSizeInBytes: cf.FileSizeInBytes}
	}
	return out
}

// DeletionVectorRefOf is the ref of a deletion vector (nil for none).
func DeletionVectorRefOf(dv *v4manifest.DeletionVector) *DeletionVectorRef {
	if dv == nil {
		return nil
	}
	return &DeletionVectorRef{Location: dv.Location, Offset: dv.Offset, SizeInBytes: dv.SizeInBytes, Cardinality: dv.Cardinality}
}
