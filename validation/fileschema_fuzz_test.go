package validation

import (
	"testing"

	"github.com/apache/iceberg-go"
)

// treeFromBytes decodes a hostile file schema: each node takes a few
// bytes (id, kind, repetition, physical type, annotation, null count,
// child count), bounded in count and depth.
func treeFromBytes(data []byte) []FileNode {
	budget := 64
	var next func(depth int) []FileNode
	next = func(depth int) []FileNode {
		if len(data) == 0 || depth > 6 {
			return nil
		}
		n := int(data[0] % 5)
		data = data[1:]
		var out []FileNode
		for i := 0; i < n && len(data) >= 6 && budget > 0; i++ {
			budget--
			b := data[:6]
			data = data[6:]
			physical := []string{"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"}[b[3]%8]
			logical := []Logical{{}, {Type: "STRING"}, {Type: "DATE"}, {Type: "TIME", Unit: "MICROS"},
				{Type: "TIMESTAMP", Unit: "MICROS", UTC: b[4]&8 != 0}, {Type: "TIMESTAMP", Unit: "NANOS"},
				{Type: "DECIMAL", Precision: int(b[4] % 40), Scale: int(b[5] % 5)}, {Type: "UUID"}, {Type: "INT", BitWidth: 8 << (b[5] % 4), Signed: b[5]&16 != 0}}[b[4]%9]
			fn := FileNode{Name: "n", FieldID: int(b[0]%14) - 1, Kind: NodeKind(b[1] % 4), NonNull: b[2]&1 != 0,
				Physical: physical, TypeLength: int(b[5] % 20), Logical: logical, Nulls: int64(b[2] >> 2), NullsKnown: b[2]&2 != 0}
			if fn.Kind != NodePrimitive {
				fn.Children = next(depth + 1)
			}
			out = append(out, fn)
		}
		return out
	}
	return next(0)
}

// FuzzCheckFileSchema: whatever the file's schema tree, the check never
// panics, answers the same twice, refuses only with its reason codes,
// and a file that only drops optional columns of an accepted file is
// accepted too.
func FuzzCheckFileSchema(f *testing.F) {
	f.Add([]byte{1, 2, 1, 1, 2, 0, 0})
	f.Add([]byte{4, 2, 0, 1, 2, 0, 0, 4, 0, 3, 5, 0, 0, 5, 2, 0, 6, 1, 0, 9, 1, 3, 4, 6, 0, 0, 0})
	f.Add([]byte{3, 9, 1, 0, 0, 0, 0, 1, 5, 1, 1, 0, 0, 0, 2, 10, 0, 1, 5, 0, 0})
	sc := nestedSchema()
	allowed := map[string]bool{"": true, ReasonFileTypeMismatch: true, ReasonRequiredFieldNulls: true,
		ReasonRequiredFieldMissing: true, ReasonColumnFileSchema: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		var use FileUse
		if len(data) > 0 {
			use = FileUse(data[0] % 3)
		}
		tree := treeFromBytes(data)
		c := FileCheck{Use: use, Kind: "File", Name: "f", Schema: sc, History: []*iceberg.Schema{sc}, Fields: []int{1, 2, 9}, DeletedRows: 3}
		p1, err1 := CheckFileSchema(c, tree)
		p2, err2 := CheckFileSchema(c, tree)
		if reasonOf(err1) != reasonOf(err2) || len(p1) != len(p2) {
			t.Fatalf("two answers: %v / %v", err1, err2)
		}
		if !allowed[reasonOf(err1)] {
			t.Fatalf("unexpected reason %q", reasonOf(err1))
		}
		if err1 != nil || use != UseData {
			return
		}
		var kept []FileNode
		for _, n := range tree {
			if n.FieldID != 2 && n.FieldID != 3 {
				kept = append(kept, n)
			}
		}
		if _, err := CheckFileSchema(c, kept); err != nil {
			t.Fatalf("dropping optional columns of an accepted file refused it: %v", err)
		}
	})
}
