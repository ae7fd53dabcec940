package tablemeta

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWithoutKeys: the members named are dropped at the top level only,
// the rest stays byte for byte; what is not an object is refused.
func TestWithoutKeys(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`{"snapshots":[]}`, `{}`},
		{`{"a":1,"snapshots":[{"b":"}"}],"c":"x\"snapshots"}`, `{"a":1,"c":"x\"snapshots"}`},
		{` { "snapshots" : [1,[2]] , "a" : {"snapshots":1}, "snapshot-log":null } `, `{"a" : {"snapshots":1}}`},
		{`{"a":true,"b":null,"snapshot-log":[{"snapshot-id":1}],"z":-1.5e3}`, `{"a":true,"b":null,"z":-1.5e3}`},
	} {
		got, err := withoutKeys([]byte(c.in), "snapshots", "snapshot-log")
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, string(got), c.in)
	}
	for _, in := range []string{``, `[]`, `"x"`, `{"a":1`, `{"a"`, `{"a" 1}`, `{1:2}`, `{"a":"`} {
		_, err := withoutKeys([]byte(in), "snapshots")
		require.Error(t, err, in)
	}
}

// FuzzWithoutKeys: on every JSON object, withoutKeys is a valid object
// whose members are the input's without the dropped key.
func FuzzWithoutKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"snapshots":[{"x":"]"}],"b":[1,{"c":"\\"}"}]}`, `{"snapshots":{}}`, `{ }`, `{"k":"\u0022"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.Contains(in, `\u`) {
			return // a key written with escapes is not one withoutKeys drops
		}
		var want map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &want) != nil || want == nil {
			return
		}
		out, err := withoutKeys([]byte(in), "snapshots")
		require.NoError(t, err, "%q", in)
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out, &got), "%q → %q", in, out)
		delete(want, "snapshots")
		require.Len(t, got, len(want), "%q → %q", in, out)
		for k, v := range want {
			require.JSONEq(t, string(v), string(got[k]), "%q → %q: member %s", in, out, k)
		}
	})
}
