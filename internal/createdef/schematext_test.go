package createdef

import (
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// TestSchemaText: a schema that does not decode is described by the path
// of the field at fault and its type, at any depth; other faults keep
// iceberg-go's message without its chained prefixes.
func TestSchemaText(t *testing.T) {
	field := func(id int, name, typ string) string {
		return `{"id":` + string(rune('0'+id)) + `,"name":"` + name + `","required":false,"type":` + typ + `}`
	}
	schema := func(fields ...string) string {
		s := `{"type":"struct","schema-id":0,"fields":[`
		for i, f := range fields {
			if i > 0 {
				s += ","
			}
			s += f
		}
		return s + `]}`
	}
	strct := func(fields ...string) string { return schema(fields...) }
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"top level", schema(field(1, "a", `"strin"`)), `field "a": unknown type "strin"`},
		{"second field", schema(field(1, "a", `"long"`), field(2, "b", `"flaot"`)), `field "b": unknown type "flaot"`},
		{"in a struct", schema(field(1, "a", strct(field(2, "b", `"strin"`)))), `field "a.b": unknown type "strin"`},
		{"two levels", schema(field(1, "a", strct(field(2, "b", strct(field(3, "c", `"int"`), field(4, "d", `"bool"`)))))),
			`field "a.b.d": unknown type "bool"`},
		{"list element", schema(field(1, "xs", `{"type":"list","element-id":2,"element":"strng","element-required":false}`)),
			`field "xs.element": unknown type "strng"`},
		{"map value", schema(field(1, "m", `{"type":"map","key-id":2,"key":"string","value-id":3,"value":"lng","value-required":false}`)),
			`field "m.value": unknown type "lng"`},
		{"map key", schema(field(1, "m", `{"type":"map","key-id":2,"key":"str","value-id":3,"value":"long","value-required":false}`)),
			`field "m.key": unknown type "str"`},
		{"struct in a list", schema(field(1, "xs", `{"type":"list","element-id":2,"element":`+strct(field(3, "y", `"dobule"`))+`,"element-required":false}`)),
			`field "xs.element.y": unknown type "dobule"`},
		{"unknown nested type", schema(field(1, "a", `{"type":"lists","element-id":2,"element":"long"}`)),
			`field "a": unknown type "lists" (nested types are struct, list and map)`},
		{"bad decimal", schema(field(1, "p", `"decimal(40,2)"`)), `field "p": invalid type "decimal(40,2)"`},
		{"no type", schema(`{"id":1,"name":"a","required":false}`), `field "a": no type`},
		{"no fields", `{"type":"struct","schema-id":0}`, "schema fields are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s iceberg.Schema
			err := json.Unmarshal([]byte(tc.schema), &s)
			require.Error(t, err, tc.schema)
			require.Contains(t, SchemaText([]byte(tc.schema), err), tc.want)
			require.NotContains(t, SchemaText([]byte(tc.schema), err), "invalid schema: invalid schema")
		})
	}
	var s iceberg.Schema
	good := schema(field(1, "a", strct(field(2, "b", `"string"`))), field(3, "d", `"decimal(10,2)"`))
	require.NoError(t, json.Unmarshal([]byte(good), &s), "the probe cases above differ from a valid schema only in the type")
}
