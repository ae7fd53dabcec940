package tablemeta

import (
	"bytes"
	"compress/gzip"
	"testing"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInflate: plain JSON passes through, a gzip stream is decompressed,
// a corrupt or oversized stream is refused.
func TestInflate(t *testing.T) {
	doc := []byte(`{"format-version":2}`)
	for _, tc := range []struct {
		name string
		in   []byte
		want []byte
		bad  bool
	}{
		{"plain", doc, doc, false},
		{"gzip", gz(t, doc), doc, false},
		{"corrupt gzip", append(gz(t, doc)[:12:12], 0, 1, 2), nil, true},
		{"too large", gz(t, make([]byte, 1025)), nil, true},
		{"at the bound", gz(t, make([]byte, 1024)), make([]byte, 1024), false},
	} {
		got, err := inflate(tc.in, 1024)
		if (err != nil) != tc.bad || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
}
