package v4manifest

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// FuzzReader: malformed or truncated manifests give errors, never panics,
// and whatever reads without error reads the same twice.
func FuzzReader(f *testing.F) {
	sc := allTypesSchema()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(f, sc)})
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range sampleRows() {
		r := r
		if err := w.Write(&r); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	valid := buf.Bytes()
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(valid[len(valid)-64:])
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), ReaderOptions{BatchSize: 2})
		if err != nil {
			return
		}
		defer r.Close()
		rows, err := r.All(context.Background())
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		r2, err := NewReader(bytes.NewReader(data), ReaderOptions{})
		if err != nil {
			t.Fatalf("second open failed: %v", err)
		}
		defer r2.Close()
		again, err := r2.All(context.Background())
		if err != nil || len(again) != len(rows) {
			t.Fatalf("second read differs: %v (%d vs %d rows)", err, len(again), len(rows))
		}
	})
}
