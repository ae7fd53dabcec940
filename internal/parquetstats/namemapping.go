package parquetstats

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/parquet"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/validation"
)

// ParseNameMapping parses a table's schema.name-mapping.default property
// (Iceberg name mapping JSON: a list of {"field-id", "names", "fields"}).
// An empty property is no mapping (nil). It fails with a
// *validation.Error, reason validation.ReasonInvalidNameMapping, when the
// JSON is not a name mapping.
func ParseNameMapping(prop string) (iceberg.NameMapping, error) {
	if prop == "" {
		return nil, nil
	}
	var nm iceberg.NameMapping
	if err := json.Unmarshal([]byte(prop), &nm); err != nil {
		return nil, &validation.Error{Reason: validation.ReasonInvalidNameMapping,
			Message: "The table's schema.name-mapping.default is not an Iceberg name mapping (" + jsonProblem(err) + ")", Details: map[string]any{}}
	}
	return nm, nil
}

// idResolver gives every node of a Parquet schema that stands for an
// Iceberg field its field id: the one written in the file, else the one
// the name mapping gives its name path. The repeated groups that only
// encode a list or map (list, key_value) stand for no field.
type idResolver struct {
	ids          map[pqschema.Node]int
	unidentified []string
}

func resolveIDs(root *pqschema.GroupNode, nm iceberg.NameMapping) *idResolver {
	r := &idResolver{ids: map[pqschema.Node]int{}}
	for i := 0; i < root.NumFields(); i++ {
		c := root.Field(i)
		r.field(c, nm, c.Name(), c.Name())
	}
	return r
}

// field resolves node n, looked up as name among the mapped fields scope
// (the parent's), and its children.
func (r *idResolver) field(n pqschema.Node, scope []iceberg.MappedField, name, path string) {
	m := lookup(scope, name)
	id := int(n.FieldID())
	if id < 0 && m != nil && m.FieldID != nil {
		id = *m.FieldID
	}
	if id >= 0 {
		r.ids[n] = id
	} else {
		r.unidentified = append(r.unidentified, path)
	}
	g, ok := n.(*pqschema.GroupNode)
	if !ok {
		return
	}
	var kids []iceberg.MappedField
	if m != nil {
		kids = m.Fields
	}
	if elem := listElement(g); elem != nil {
		// The name mapping names a list's element "element", whatever
		// the file calls it (element, item, array).
		r.field(elem, kids, "element", path+".element")
		return
	}
	if key, value := mapEntries(g); key != nil {
		r.field(key, kids, "key", path+".key")
		if value != nil {
			r.field(value, kids, "value", path+".value")
		}
		return
	}
	for i := 0; i < g.NumFields(); i++ {
		c := g.Field(i)
		r.field(c, kids, c.Name(), path+"."+c.Name())
	}
}

func lookup(scope []iceberg.MappedField, name string) *iceberg.MappedField {
	for i := range scope {
		for _, n := range scope[i].Names {
			if n == name {
				return &scope[i]
			}
		}
	}
	return nil
}

// listElement is the element node of a LIST-annotated group; nil when g
// is not a list. It follows the Parquet format's backward-compatibility
// rules, since old writers (parquet-avro, Hive, Thrift) wrote two-level
// lists: the repeated child itself is the element when it is a primitive,
// a group of several fields, or a one-field group named "array" or
// "<list>_tuple" (then the element is a one-field struct); otherwise the
// element is the repeated group's one child (the three-level form).
func listElement(g *pqschema.GroupNode) pqschema.Node {
	_, isList := g.LogicalType().(pqschema.ListLogicalType)
	if (!isList && g.ConvertedType() != pqschema.ConvertedTypes.List) || g.NumFields() != 1 {
		return nil
	}
	rep := g.Field(0)
	if rep.RepetitionType() != parquet.Repetitions.Repeated {
		return nil
	}
	rg, ok := rep.(*pqschema.GroupNode)
	if !ok || rg.NumFields() != 1 || rg.Name() == "array" || rg.Name() == g.Name()+"_tuple" {
		return rep
	}
	return rg.Field(0)
}

// mapEntries are the key and value nodes of a MAP-annotated group (its
// repeated key_value group's two children); nil when g is not a map.
func mapEntries(g *pqschema.GroupNode) (key, value pqschema.Node) {
	_, isMap := g.LogicalType().(pqschema.MapLogicalType)
	ct := g.ConvertedType()
	if (!isMap && ct != pqschema.ConvertedTypes.Map && ct != pqschema.ConvertedTypes.MapKeyValue) || g.NumFields() != 1 {
		return nil, nil
	}
	kv, ok := g.Field(0).(*pqschema.GroupNode)
	if !ok || kv.RepetitionType() != parquet.Repetitions.Repeated || kv.NumFields() < 1 || kv.NumFields() > 2 {
		return nil, nil
	}
	if kv.NumFields() == 2 {
		return kv.Field(0), kv.Field(1)
	}
	return kv.Field(0), nil
}

// FieldIDs gives every node of a Parquet schema that stands for an Iceberg
// field its field id, as the Iceberg spec resolves it: the id written in
// the file (PARQUET:field_id), else the one the name mapping nm (nil for
// none) gives the node's name path (nested fields, a list's "element", a
// map's "key" and "value", any of a mapped field's names). Nodes with
// neither are absent: readers ignore them. The repeated groups that only
// encode a list or map are absent too.
func FieldIDs(root *pqschema.GroupNode, nm iceberg.NameMapping) map[pqschema.Node]int {
	return resolveIDs(root, nm).ids
}

// SameFields reports whether the nested fields of Parquet node n (ids
// from FieldIDs) are exactly those of the Iceberg type t, in t's order
// (struct fields, a list's element, a map's key and value), so that the
// column can be read as t by position. A primitive t matches any node
// (its type is checked by the reader).
func SameFields(n pqschema.Node, ids map[pqschema.Node]int, t iceberg.Type) bool {
	g, isGroup := n.(*pqschema.GroupNode)
	switch t := t.(type) {
	case *iceberg.StructType:
		if !isGroup || listElement(g) != nil || func() bool { k, _ := mapEntries(g); return k != nil }() {
			return false
		}
		fs := t.FieldList
		if g.NumFields() != len(fs) {
			return false
		}
		for i, f := range fs {
			c := g.Field(i)
			if id, ok := ids[c]; !ok || id != f.ID || !SameFields(c, ids, f.Type) {
				return false
			}
		}
		return true
	case *iceberg.ListType:
		if !isGroup {
			return false
		}
		e := listElement(g)
		if e == nil {
			return false
		}
		id, ok := ids[e]
		return ok && id == t.ElementID && SameFields(e, ids, t.Element)
	case *iceberg.MapType:
		if !isGroup {
			return false
		}
		k, v := mapEntries(g)
		if k == nil || v == nil {
			return false
		}
		kid, kok := ids[k]
		vid, vok := ids[v]
		return kok && vok && kid == t.KeyID && vid == t.ValueID && SameFields(k, ids, t.KeyType) && SameFields(v, ids, t.ValueType)
	default:
		return !isGroup
	}
}
