package pipeline

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"namespace":["a"],"name":"t"}`, ""},
		{`{"namespace":["nsb"],"name":"x","namespace":["nsa"]}`, "namespace"},
		{`{"name":"a","NAME":"b"}`, "NAME"},
		{`{"name":"a","\u212ame":"b"}`, ""}, // KELVIN SIGN: "Kame", not "name"
		{`{"kind":"a","\u212aind":"b"}`, "\u212aind"},
		{`{"a":{"b":1,"c":{"d":[1,{"e":2,"e":3}]}}}`, "e"},
		{`{"a":{"b":1},"b":2}`, "" /* another object */},
		{`[{"a":1},{"a":2}]`, ""},
		{`{"a":[{"x":1}],"a":2}`, "a"},
		{`{"resource":{"kind":"server"},"privilege":"x","resource":{"kind":"table"}}`, "resource"},
		{`{"a":`, ""},
		{`not json`, ""},
		{``, ""},
	} {
		require.Equal(t, c.want, duplicateKey([]byte(c.body)), c.body)
	}
}
