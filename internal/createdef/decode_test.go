package createdef

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
)

// TestDecode: fields numbered from 0 (as Spark sends them) get fresh ids
// from 1, and the spec's and order's source ids follow them by name; a
// part that does not decode is a 400 naming that part.
func TestDecode(t *testing.T) {
	schema := json.RawMessage(`{"type":"struct","schema-id":0,"fields":[
		{"id":0,"name":"id","type":"long","required":true},
		{"id":1,"name":"ts","type":"timestamp","required":false}]}`)
	spec := json.RawMessage(`{"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"ts_day","transform":"day"}]}`)
	order := json.RawMessage(`{"order-id":1,"fields":[{"source-id":0,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}`)

	sc, sp, so, err := Decode(schema, spec, order)
	require.NoError(t, err)
	id, _ := sc.FindFieldByName("id")
	ts, _ := sc.FindFieldByName("ts")
	require.Equal(t, 1, id.ID)
	require.Equal(t, 2, ts.ID)
	require.NotNil(t, sp)
	require.Equal(t, ts.ID, sp.Field(0).SourceID())
	n := 0
	for _, f := range so.Fields() {
		require.Equal(t, id.ID, f.SourceID())
		n++
	}
	require.Equal(t, 1, n)

	_, sp, _, err = Decode(schema, json.RawMessage("null"), nil)
	require.NoError(t, err)
	require.Nil(t, sp, "a null spec is no spec")

	for name, tc := range map[string]struct {
		schema, spec, order string
		want                string
	}{
		"bad type":     {schema: `{"type":"struct","fields":[{"id":1,"name":"a","type":"strin","required":false}]}`, want: `Invalid schema: field "a"`},
		"unknown col":  {schema: string(schema), spec: `{"spec-id":0,"fields":[{"source-id":7,"field-id":1000,"name":"x","transform":"identity"}]}`, want: "Invalid table definition"},
		"bad order":    {schema: string(schema), order: `{"order-id":1,"fields":[{"source-id":0,"transform":"identity","direction":"sideways","null-order":"nulls-first"}]}`, want: "Invalid write order"},
		"not a schema": {schema: `[1]`, want: "Invalid schema"},
	} {
		t.Run(name, func(t *testing.T) {
			var sp, so json.RawMessage
			if tc.spec != "" {
				sp = json.RawMessage(tc.spec)
			}
			if tc.order != "" {
				so = json.RawMessage(tc.order)
			}
			_, _, _, err := Decode(json.RawMessage(tc.schema), sp, so)
			require.Error(t, err)
			require.Equal(t, fault.BadRequest, fault.KindOf(err))
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
