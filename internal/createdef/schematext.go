// Package createdef decodes the table definition of a create request: its
// schema, partition spec and sort order, with fresh field ids assigned as
// Iceberg does, and a message naming the field when a schema does not
// decode. It is pure: values in, values or 400 faults out.
package createdef

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/internal/fault"
)

// SchemaText is the client's message for a schema that did not decode:
// the field whose type is wrong, by its dotted path (list elements as
// "element", map keys and values as "key" and "value", as in Iceberg's
// column names), and the type it gave, e.g.
//
//	field "a.b": unknown type "strin"
//
// iceberg-go alone says only "invalid schema: invalid schema fields:
// invalid schema: unrecognized field type". The field is found by decoding
// each field of raw again, innermost first, with iceberg-go itself, so
// what counts as a valid type stays iceberg-go's rule. Anything else (no
// fields, a duplicate id, malformed JSON) keeps ClientText's message.
func SchemaText(raw []byte, err error) string {
	var top struct {
		Fields []json.RawMessage `json:"fields"`
	}
	if json.Unmarshal(raw, &top) == nil {
		for _, f := range top.Fields {
			if msg := fieldTypeError("", f); msg != "" {
				return msg
			}
		}
	}
	return trimIcebergPrefixes(fault.ClientText(err))
}

// schemaField is what the walk reads of a field.
type schemaField struct {
	Name string          `json:"name"`
	Type json.RawMessage `json:"type"`
}

// fieldTypeError describes the innermost field under raw (a field of a
// struct) whose type does not decode, or returns "" when the field decodes
// or is not one iceberg-go fails on for its type.
func fieldTypeError(parent string, raw json.RawMessage) string {
	var f schemaField
	if json.Unmarshal(raw, &f) != nil {
		return ""
	}
	path := f.Name
	if parent != "" {
		path = parent + "." + f.Name
	}
	return typeError(path, f.Type)
}

// typeError describes what is wrong with the type typ of the field at
// path, looking into nested types first; "" when it decodes.
func typeError(path string, typ json.RawMessage) string {
	if len(typ) == 0 || string(typ) == "null" {
		return fmt.Sprintf("field %q: no type", path)
	}
	var nested struct {
		Type    string            `json:"type"`
		Fields  []json.RawMessage `json:"fields"`
		Element json.RawMessage   `json:"element"`
		Key     json.RawMessage   `json:"key"`
		Value   json.RawMessage   `json:"value"`
	}
	if typ[0] == '{' && json.Unmarshal(typ, &nested) == nil {
		switch nested.Type {
		case "struct":
			for _, f := range nested.Fields {
				if msg := fieldTypeError(path, f); msg != "" {
					return msg
				}
			}
		case "list":
			if msg := typeError(path+".element", nested.Element); msg != "" {
				return msg
			}
		case "map":
			if msg := typeError(path+".key", nested.Key); msg != "" {
				return msg
			}
			if msg := typeError(path+".value", nested.Value); msg != "" {
				return msg
			}
		default:
			return fmt.Sprintf("field %q: unknown type %q (nested types are struct, list and map)", path, nested.Type)
		}
	}
	err := decodeFieldType(typ)
	if err == nil {
		return ""
	}
	var name string
	if json.Unmarshal(typ, &name) != nil {
		// A nested type whose children decode but which does not itself
		// (a missing element-id, a field without a name...).
		return fmt.Sprintf("field %q: %s", path, trimIcebergPrefixes(fault.ClientText(err)))
	}
	detail := trimIcebergPrefixes(fault.ClientText(err))
	if detail == "unrecognized field type" || detail == name {
		return fmt.Sprintf("field %q: unknown type %q", path, name)
	}
	return fmt.Sprintf("field %q: invalid type %q: %s", path, name, detail)
}

// decodeFieldType decodes typ as the type of a one-field schema (its id
// the largest, so that it cannot collide with one inside typ).
func decodeFieldType(typ json.RawMessage) error {
	probe, err := json.Marshal(map[string]any{"type": "struct", "fields": []any{
		map[string]any{"id": math.MaxInt32, "name": "probe", "required": false, "type": typ},
	}})
	if err != nil {
		return err
	}
	var s iceberg.Schema
	return json.Unmarshal(probe, &s)
}

// trimIcebergPrefixes drops the sentinel texts iceberg-go chains in front
// of its messages ("invalid schema: invalid schema fields: invalid type:
// ..."), which say nothing the client's message does not.
func trimIcebergPrefixes(s string) string {
	for {
		t := s
		for _, p := range []string{iceberg.ErrInvalidSchema.Error() + ": ", "invalid schema fields: ", iceberg.ErrInvalidTypeString.Error() + ": "} {
			t = strings.TrimPrefix(t, p)
		}
		if t == s {
			return s
		}
		s = t
	}
}
