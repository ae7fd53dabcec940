package validation

import (
	"fmt"

	"github.com/apache/iceberg-go"
)

// Reason codes of a file whose Parquet schema does not fit the table's.
const (
	// ReasonFileTypeMismatch: a data or delete file's column for a field
	// does not hold the field's type (physical type, logical annotation,
	// decimal precision and scale, fixed length, or the shape: a struct
	// must be a group, a list a LIST group, a map a MAP group).
	ReasonFileTypeMismatch = "file-type-mismatch"
	// ReasonRequiredFieldNulls: a file may hold nulls in a required field:
	// its Parquet column is not REQUIRED and the footer does not prove
	// (null count 0 on every chunk) that it has none.
	ReasonRequiredFieldNulls = "required-field-nulls"
	// ReasonRequiredFieldMissing: a data file has no column for a required
	// field (that has no initial default), or an equality-delete file none
	// for one of its equality ids.
	ReasonRequiredFieldMissing = "required-field-missing"
	// ReasonDuplicateFile: a file named twice in one request, or one that
	// is already a live file of the table.
	ReasonDuplicateFile = "duplicate-file"
)

// NodeKind is the shape of a file schema node.
type NodeKind int

// The shapes of FileNode: a primitive leaf, a plain group, a LIST group
// (Children: the element) or a MAP group (Children: key, then value).
const (
	NodePrimitive NodeKind = iota
	NodeStruct
	NodeList
	NodeMap
)

// Logical is a Parquet leaf's logical annotation (legacy converted types
// already mapped to their logical type).
type Logical struct {
	// Type is "" (none), STRING, ENUM, JSON, BSON, DATE, TIME, TIMESTAMP,
	// DECIMAL, UUID, INT or any other annotation's name.
	Type string
	// Unit of TIME and TIMESTAMP: MILLIS, MICROS or NANOS.
	Unit string
	// UTC is TIME and TIMESTAMP's isAdjustedToUTC.
	UTC bool
	// FromConverted: a TIMESTAMP from a legacy converted type, whose UTC
	// flag says nothing about the writer's intent.
	FromConverted    bool
	Precision, Scale int
	// BitWidth and Signed of INT.
	BitWidth int
	Signed   bool
}

// FileNode is one field of a Parquet file's schema, list and map
// encodings collapsed: a list's node has its element as only child, a
// map's its key and value (the repeated groups that only encode them are
// not nodes).
type FileNode struct {
	Name    string // name path in the file, for messages
	FieldID int    // -1 when the node has none (after name mapping)
	Kind    NodeKind
	// NonNull: the node is REQUIRED or REPEATED, so it cannot be null.
	NonNull    bool
	Physical   string // leaves: BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
	TypeLength int    // of a FIXED_LEN_BYTE_ARRAY
	Logical    Logical
	// Nulls is a leaf's null count summed over row groups (Parquet counts
	// a null ancestor, and an empty list, as a null of every leaf below);
	// NullsKnown is false when a chunk gave no null count.
	Nulls      int64
	NullsKnown bool
	Children   []FileNode
}

// FileUse is what a checked file is to the table.
type FileUse int

// The uses of a file: a data file holds every field; a column file the
// listed top-level fields; an equality-delete file some fields, its
// equality ids at least.
const (
	UseData FileUse = iota
	UseColumn
	UseEqualityDelete
)

// FileCheck is a file to check against a table schema.
type FileCheck struct {
	Use  FileUse
	Kind string // how messages name the file: "Data file", "Column file"...
	Name string // the file, relative to the table
	// Schema is the table's current schema; History every schema of the
	// table (a file written under an older one may hold a field's older
	// type where the spec allows promotion: int→long, float→double,
	// decimal(P,S)→decimal(P',S)).
	Schema  *iceberg.Schema
	History []*iceberg.Schema
	// Fields are the field ids the file must hold: a column file's listed
	// (top-level) ids, an equality-delete file's equality ids (top-level
	// or inside structs). Unused for data files.
	Fields []int
	// DeletedRows is, for a column file, how many rows of its base the
	// base's deletion vector deletes (0: none).
	DeletedRows int64
}

// NullsToProve is a required top-level primitive field of a column file
// whose footer counts some nulls, no more than the base's deleted rows:
// the caller must show they sit only at deleted positions.
type NullsToProve struct {
	FieldID int
	Nulls   int64
}

// CheckFileSchema checks a file's Parquet schema (its top-level nodes
// root) against the table, matching nodes to fields by field id; nodes
// with ids the table does not know are ignored (readers project by id).
// Every field present must hold its type (see the Reason codes), list
// elements, map keys and values and struct children included. A field
// required in the table has no nulls when its node is REQUIRED, or when
// every leaf below it counts 0 nulls on every chunk: an OPTIONAL node
// whose leaves count nulls (or give no count) is refused, even when the
// nulls could be an optional ancestor's (Parquet does not tell). A
// required field absent from a data file is refused unless it has an
// initial default; absent optional fields read as null. A column file
// must hold its listed ids; a required field's column there is OPTIONAL
// (deleted rows may be null), so its nulls must be 0, or, for a
// primitive field, at most DeletedRows: those are returned for the
// caller to check against the deleted positions. It returns a *Error:
// ReasonFileTypeMismatch (ReasonColumnFileSchema for column files),
// ReasonRequiredFieldNulls or ReasonRequiredFieldMissing.
func CheckFileSchema(c FileCheck, root []FileNode) ([]NullsToProve, error) {
	ck := &schemaChecker{c: c, history: fieldHistory(c.History)}
	if c.Use == UseEqualityDelete {
		return nil, ck.equalityDelete(root)
	}
	fields := c.Schema.Fields()
	if c.Use == UseColumn {
		fields = fields[:0:0]
		for _, id := range c.Fields {
			if f, ok := c.Schema.FindFieldByID(id); ok {
				fields = append(fields, f)
			}
		}
	}
	for _, f := range fields {
		n := byID(root, f.ID)
		if n == nil {
			if err := ck.absent(f); err != nil {
				return nil, err
			}
			continue
		}
		if err := ck.top(f, n); err != nil {
			return nil, err
		}
	}
	return ck.prove, nil
}

type schemaChecker struct {
	c       FileCheck
	history map[int][]iceberg.Type
	prove   []NullsToProve
}

// top checks a top-level field; a column file's required primitive may
// count nulls up to the base's deleted rows (returned to prove).
func (ck *schemaChecker) top(f iceberg.NestedField, n *FileNode) error {
	if ck.c.Use == UseColumn && f.Required && n.Kind == NodePrimitive && !n.NonNull &&
		n.NullsKnown && n.Nulls > 0 && n.Nulls <= ck.c.DeletedRows {
		if err := ck.shape(f, n); err != nil {
			return err
		}
		ck.prove = append(ck.prove, NullsToProve{FieldID: f.ID, Nulls: n.Nulls})
		return nil
	}
	return ck.field(f, n)
}

// absent decides on a field with no column in the file.
func (ck *schemaChecker) absent(f iceberg.NestedField) error {
	switch {
	case ck.c.Use == UseColumn:
		return ck.reject(ReasonColumnFileSchema, f, nil, "has no column for it")
	case f.Required && f.InitialDefault == nil:
		return ck.reject(ReasonRequiredFieldMissing, f, nil, "has no column for this required field")
	}
	return nil
}

// field checks node n against field f, then its children.
func (ck *schemaChecker) field(f iceberg.NestedField, n *FileNode) error {
	if err := ck.shape(f, n); err != nil {
		return err
	}
	if f.Required && !n.NonNull && !noNulls(n, 0) {
		return ck.reject(ReasonRequiredFieldNulls, f, n, "may hold nulls in this required field: its column is not REQUIRED and the footer does not count 0 nulls on every chunk")
	}
	switch t := f.Type.(type) {
	case *iceberg.StructType:
		for _, cf := range t.FieldList {
			cn := byID(n.Children, cf.ID)
			if cn == nil {
				if cf.Required && cf.InitialDefault == nil {
					return ck.reject(ReasonRequiredFieldMissing, cf, nil, "has no column for this required field")
				}
				continue
			}
			if err := ck.field(cf, cn); err != nil {
				return err
			}
		}
	case *iceberg.ListType:
		return ck.field(iceberg.NestedField{ID: t.ElementID, Name: f.Name + ".element", Type: t.Element, Required: t.ElementRequired}, &n.Children[0])
	case *iceberg.MapType:
		if err := ck.field(iceberg.NestedField{ID: t.KeyID, Name: f.Name + ".key", Type: t.KeyType, Required: true}, &n.Children[0]); err != nil {
			return err
		}
		return ck.field(iceberg.NestedField{ID: t.ValueID, Name: f.Name + ".value", Type: t.ValueType, Required: t.ValueRequired}, &n.Children[1])
	}
	return nil
}

// shape checks that n has f's kind (and for lists and maps, children with
// the element, key and value ids) and, for a primitive, f's type.
func (ck *schemaChecker) shape(f iceberg.NestedField, n *FileNode) error {
	reason := ReasonFileTypeMismatch
	if ck.c.Use == UseColumn {
		reason = ReasonColumnFileSchema
	}
	ok := true
	switch t := f.Type.(type) {
	case *iceberg.StructType:
		ok = n.Kind == NodeStruct
	case *iceberg.ListType:
		ok = n.Kind == NodeList && len(n.Children) == 1 && n.Children[0].FieldID == t.ElementID
	case *iceberg.MapType:
		ok = n.Kind == NodeMap && len(n.Children) == 2 && n.Children[0].FieldID == t.KeyID && n.Children[1].FieldID == t.ValueID
	case iceberg.PrimitiveType:
		ok = n.Kind == NodePrimitive && ck.primitiveFits(f.ID, t, n)
	}
	if !ok {
		return ck.reject(reason, f, n, "holds %s, not the table's %s", describe(n), f.Type)
	}
	return nil
}

// primitiveFits reports whether leaf n holds t, or an older type of the
// field that t was promoted from.
func (ck *schemaChecker) primitiveFits(id int, t iceberg.PrimitiveType, n *FileNode) bool {
	if leafHolds(t, n) {
		return true
	}
	for _, old := range ck.history[id] {
		if op, ok := old.(iceberg.PrimitiveType); ok && promotes(op, t) && leafHolds(op, n) {
			return true
		}
	}
	return false
}

// equalityDelete checks an equality-delete file: every equality id has a
// column (top-level or inside structs), and every field the file holds
// is checked as in a data file.
func (ck *schemaChecker) equalityDelete(root []FileNode) error {
	for _, id := range ck.c.Fields {
		f, ok := ck.c.Schema.FindFieldByID(id)
		if !ok {
			continue // the route refuses unknown equality ids first
		}
		if findNested(root, ck.c.Schema, id) == nil {
			return ck.reject(ReasonRequiredFieldMissing, f, nil, "has no column for equality field")
		}
	}
	for _, f := range ck.c.Schema.Fields() {
		if n := byID(root, f.ID); n != nil {
			if err := ck.field(f, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// findNested finds the node of field id, following struct fields from the
// top of the schema; nil when the file has none.
func findNested(root []FileNode, sc *iceberg.Schema, id int) *FileNode {
	var walk func(nodes []FileNode, fields []iceberg.NestedField) *FileNode
	walk = func(nodes []FileNode, fields []iceberg.NestedField) *FileNode {
		for _, f := range fields {
			n := byID(nodes, f.ID)
			if n == nil {
				continue
			}
			if f.ID == id {
				return n
			}
			if st, ok := f.Type.(*iceberg.StructType); ok && n.Kind == NodeStruct {
				if hit := walk(n.Children, st.FieldList); hit != nil {
					return hit
				}
			}
		}
		return nil
	}
	return walk(root, sc.Fields())
}

// noNulls reports whether the footer proves that no leaf below n (n
// included) counts a null.
func noNulls(n *FileNode, depth int) bool {
	if depth > maxDepth {
		return false
	}
	if n.Kind == NodePrimitive {
		return n.NullsKnown && n.Nulls == 0
	}
	if len(n.Children) == 0 {
		return false
	}
	for i := range n.Children {
		if !noNulls(&n.Children[i], depth+1) {
			return false
		}
	}
	return true
}

// maxDepth bounds the nesting noNulls follows (the table schema bounds
// the rest of the walk).
const maxDepth = 256

func byID(nodes []FileNode, id int) *FileNode {
	for i := range nodes {
		if nodes[i].FieldID == id {
			return &nodes[i]
		}
	}
	return nil
}

// reject builds the rejection of field f (node n, nil when absent).
func (ck *schemaChecker) reject(reason string, f iceberg.NestedField, n *FileNode, format string, args ...any) *Error {
	d := map[string]any{"file": ck.c.Name, "field": f.Name, "field-id": f.ID, "table-type": f.Type.String()}
	if n != nil {
		d["file-type"] = describe(n)
		d["column"] = n.Name
	}
	return reject(reason, d, "%s %s: field %s (id %d) %s", ck.c.Kind, ck.c.Name, f.Name, f.ID, fmt.Sprintf(format, args...))
}

// describe names what a file node holds, for messages.
func describe(n *FileNode) string {
	switch n.Kind {
	case NodeStruct:
		return "a group"
	case NodeList:
		return "a list"
	case NodeMap:
		return "a map"
	}
	s := n.Physical
	if n.Physical == "FIXED_LEN_BYTE_ARRAY" {
		s = fmt.Sprintf("%s(%d)", s, n.TypeLength)
	}
	l := n.Logical
	switch l.Type {
	case "":
		return s
	case "TIME", "TIMESTAMP":
		return fmt.Sprintf("%s %s(%s, adjustedToUTC=%t)", s, l.Type, l.Unit, l.UTC)
	case "DECIMAL":
		return fmt.Sprintf("%s DECIMAL(%d, %d)", s, l.Precision, l.Scale)
	case "INT":
		return fmt.Sprintf("%s INT(%d, signed=%t)", s, l.BitWidth, l.Signed)
	}
	return s + " " + l.Type
}

// fieldHistory maps every field id to the types it had in the schemas.
func fieldHistory(schemas []*iceberg.Schema) map[int][]iceberg.Type {
	out := map[int][]iceberg.Type{}
	for _, sc := range schemas {
		if sc == nil {
			continue
		}
		ids, err := iceberg.IndexByID(sc)
		if err != nil {
			continue
		}
		for id, f := range ids {
			out[id] = append(out[id], f.Type)
		}
	}
	return out
}

// CheckNullsDeleted decides on a required field of a column file whose
// nulls CheckFileSchema returned to prove: nullAt is the first position
// holding a null that the base's deletion vector does not delete (-1:
// none), why (non-empty) that the positions could not be read. It fails
// with ReasonRequiredFieldNulls unless the nulls are all at deleted rows.
func CheckNullsDeleted(c FileCheck, id int, nullAt int64, why string) error {
	f, ok := c.Schema.FindFieldByID(id)
	if !ok {
		return nil
	}
	ck := &schemaChecker{c: c}
	switch {
	case why != "":
		return ck.reject(ReasonRequiredFieldNulls, f, nil, "counts nulls in this required field, and the catalog cannot check that they are only at deleted rows: %s", why)
	case nullAt >= 0:
		e := ck.reject(ReasonRequiredFieldNulls, f, nil, "is null at row %d, which the base's deletion vector does not delete", nullAt)
		e.Details["position"] = nullAt
		return e
	}
	return nil
}
