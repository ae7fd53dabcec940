package validation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const goodUDF = `{"function-uuid":"42fd3f91-bc10-41c1-8a52-92b57dd0a9b2","format-version":1,
"definitions":[{"definition-id":"int","parameters":[{"name":"x","type":"int"}],"return-type":{"type":"struct","fields":[{"name":"a","type":{"type":"list","element":"int"}}]},
"function-type":"udtf","versions":[{"version-id":1,"representations":[{"type":"sql","dialect":"spark","sql":"select x"}],"timestamp-ms":1}],"current-version-id":1}],
"definition-log":[{"timestamp-ms":1,"definition-versions":[{"definition-id":"int","version-id":1}]}],"location":"s3://b/f"}`

// edit returns goodUDF with path (keys joined by dots, numbers index
// arrays) set to v, or removed when v is nil.
func edit(t *testing.T, path string, v any) []byte {
	var doc any
	require.NoError(t, json.Unmarshal([]byte(goodUDF), &doc))
	keys := strings.Split(path, ".")
	cur := doc
	for _, k := range keys[:len(keys)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			cur = c[int(k[0]-'0')]
		}
	}
	m := cur.(map[string]any)
	last := keys[len(keys)-1]
	if v == nil {
		delete(m, last)
	} else {
		m[last] = v
	}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

func TestValidateFunctionMetadata(t *testing.T) {
	m, err := ValidateFunctionMetadata([]byte(goodUDF))
	require.Nil(t, err)
	require.Equal(t, FunctionMetadata{UUID: "42fd3f91-bc10-41c1-8a52-92b57dd0a9b2", FormatVersion: 1, Location: "s3://b/f", Definitions: 1}, *m)

	cases := []struct {
		path string
		v    any
		want string
	}{
		{"function-uuid", nil, "function-uuid is required"},
		{"function-uuid", "nope", "not a UUID"},
		{"format-version", nil, "format-version is required"},
		{"format-version", 2, "must be 1"},
		{"definitions", nil, "definitions is required"},
		{"definition-log", nil, "definition-log is required"},
		{"definitions.0.definition-id", nil, "definition-id is required"},
		{"definitions.0.parameters", nil, "parameters is required"},
		{"definitions.0.return-type", nil, "return-type is required"},
		{"definitions.0.return-type", "int", "must be a struct"},
		{"definitions.0.function-type", nil, "function-type is required"},
		{"definitions.0.function-type", "proc", "udf or udtf"},
		{"definitions.0.current-version-id", nil, "current-version-id is required"},
		{"definitions.0.current-version-id", 7, "not one of its versions"},
		{"definitions.0.versions", []any{}, "must not be empty"},
		{"definitions.0.parameters.0.name", nil, "name is required"},
		{"definitions.0.parameters.0.type", "decimal(9, 2)", "not a type string"},
		{"definitions.0.parameters.0.type", map[string]any{"type": "map", "key": "int"}, "value is required"},
		{"definitions.0.versions.0.timestamp-ms", nil, "timestamp-ms is required"},
		{"definitions.0.versions.0.representations", nil, "representations is required"},
		{"definitions.0.versions.0.on-null-input", "skip", "return-null or call"},
		{"definitions.0.versions.0.representations.0.type", "python", "type must be sql"},
		{"definitions.0.versions.0.representations.0.sql", nil, "sql is required"},
		{"definition-log.0.definition-versions.0.version-id", 9, "no version 9"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			_, err := ValidateFunctionMetadata(edit(t, c.path, c.v))
			require.NotNil(t, err)
			require.Equal(t, ReasonFunctionMetadata, err.Reason)
			require.Contains(t, err.Message, c.want)
		})
	}
	for _, bad := range []string{``, `[]`, `{"function-uuid":1}`, goodUDF + `{}`, goodUDF + `}`, goodUDF + `]`, goodUDF + ` x`} {
		_, err := ValidateFunctionMetadata([]byte(bad))
		require.NotNil(t, err, "%s", bad)
	}
}

// FuzzValidateFunctionMetadata: any input is accepted or refused with the
// reason, never a panic.
func FuzzValidateFunctionMetadata(f *testing.F) {
	f.Add([]byte(goodUDF))
	f.Add([]byte(`{"definitions":[{"return-type":{"type":"list","element":{"type":"list"}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ValidateFunctionMetadata(b)
		if err != nil && err.Reason != ReasonFunctionMetadata {
			t.Fatalf("reason %q", err.Reason)
		}
		// What is accepted is stored as it is: it must be one JSON document.
		if err == nil && !json.Valid(b) {
			t.Fatalf("accepted a document that is not valid JSON: %q", b)
		}
	})
}
