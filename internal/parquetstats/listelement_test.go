package parquetstats

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/validation"
)

// TestListElement: the element node of every list shape the Parquet
// format's compatibility rules name, so that files from old writers are
// checked against the element they really hold.
func TestListElement(t *testing.T) {
	prim := func(name string, rep parquet.Repetition) pqschema.Node {
		return pqschema.MustPrimitive(pqschema.NewPrimitiveNode(name, rep, parquet.Types.Int32, -1, -1))
	}
	group := func(name string, rep parquet.Repetition, kids ...pqschema.Node) *pqschema.GroupNode {
		return pqschema.MustGroup(pqschema.NewGroupNode(name, rep, kids, -1))
	}
	list := func(name string, rep pqschema.Node) *pqschema.GroupNode {
		return pqschema.MustGroup(pqschema.NewGroupNodeLogical(name, parquet.Repetitions.Optional,
			[]pqschema.Node{rep}, pqschema.NewListLogicalType(), -1))
	}
	elem := prim("element", parquet.Repetitions.Optional)
	threeLevel := group("list", parquet.Repetitions.Repeated, elem)
	repPrim := prim("array", parquet.Repetitions.Repeated)
	arrayGroup := group("array", parquet.Repetitions.Repeated, prim("x", parquet.Repetitions.Required))
	tuple := group("l_tuple", parquet.Repetitions.Repeated, prim("x", parquet.Repetitions.Required))
	pair := group("bag", parquet.Repetitions.Repeated, prim("a", parquet.Repetitions.Required), prim("b", parquet.Repetitions.Required))
	for _, tc := range []struct {
		name string
		g    *pqschema.GroupNode
		want pqschema.Node
	}{
		{"three-level", list("l", threeLevel), elem},
		{"repeated primitive", list("l", repPrim), repPrim},
		{"one-field group named array", list("l", arrayGroup), arrayGroup},
		{"one-field group named <list>_tuple", list("l", tuple), tuple},
		{"group of several fields", list("l", pair), pair},
		{"not a list", group("s", parquet.Repetitions.Optional, threeLevel), nil},
		{"list child not repeated", list("l", prim("element", parquet.Repetitions.Optional)), nil},
	} {
		if got := listElement(tc.g); got != tc.want {
			name := "<nil>"
			if got != nil {
				name = got.Name()
			}
			t.Errorf("%s: element %s", tc.name, name)
		}
	}
}

// TestLegacyListChecks: a file written by an old writer with a two-level
// list of structs (repeated group array) passes the schema check against
// the table's list<struct<x int>>, element and struct field matched by id.
func TestLegacyListChecks(t *testing.T) {
	x := pqschema.MustPrimitive(pqschema.NewPrimitiveNode("x", parquet.Repetitions.Required, parquet.Types.Int32, 3, -1))
	arr := pqschema.MustGroup(pqschema.NewGroupNode("array", parquet.Repetitions.Repeated, []pqschema.Node{x}, 2))
	l := pqschema.MustGroup(pqschema.NewGroupNodeConverted("l", parquet.Repetitions.Optional, []pqschema.Node{arr},
		pqschema.ConvertedTypes.List, 1))
	root := pqschema.MustGroup(pqschema.NewGroupNode("schema", parquet.Repetitions.Required, []pqschema.Node{l}, -1))
	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "l", Type: &iceberg.ListType{ElementID: 2, ElementRequired: true,
		Element: &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: true}}}}})
	fi, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), sc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := validation.CheckFileSchema(validation.FileCheck{Use: validation.UseData, Schema: sc}, fi.Tree); err != nil {
		t.Errorf("legacy two-level list refused: %v", err)
	}
	// The same file against list<int>: the element is a struct, refused.
	scInt := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "l", Type: &iceberg.ListType{ElementID: 2, ElementRequired: true,
		Element: iceberg.PrimitiveTypes.Int32}})
	if _, err := validation.CheckFileSchema(validation.FileCheck{Use: validation.UseData, Schema: scInt}, fi.Tree); err == nil {
		t.Error("a list of structs passed as list<int>")
	}
}
