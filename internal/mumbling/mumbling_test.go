package mumbling

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The PFOR examples of the spec's Appendix A: what the encoder writes and
// what the decoder reads back.
func TestPFORSpecExamples(t *testing.T) {
	zeros := make([]byte, 256)
	fives := slices.Repeat([]byte{5}, 51)
	for _, c := range []struct {
		name string
		vals []byte
		enc  []byte
	}{
		{"256 zeros", zeros, []byte{0x00, 0x00, 0x00}},
		{"51 fives", fives, []byte{0x00, 0x00, 0x05}},
		{"two exceptions", []byte{0, 0, 0, 0, 0xff, 0, 0, 0xfe}, []byte{0x80, 0x02, 0x00, 0x04, 0x07, 0xff, 0xfe}},
		{"two bits", []byte{6, 7, 8}, []byte{0x02, 0x00, 0x06, 0x18}},
		{"one exception", []byte{6, 34, 8, 7}, []byte{0x32, 0x01, 0x06, 0x09, 0x01, 0xe0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.enc, appendPFOR(nil, c.vals))
			r := reader{b: c.enc}
			got, err := r.pfor(nil, len(c.vals))
			require.NoError(t, err)
			require.Equal(t, c.vals, got)
			require.Equal(t, len(c.enc), r.at)
		})
	}
}

// The spec's container examples: sparse offsets and dense bit order.
func TestContainerLayout(t *testing.T) {
	b, err := Encode([]uint32{0, 34, 255})
	require.NoError(t, err)
	// header: version 1, 3 positions, 1 container; descriptor chunk for
	// [3] (b1=0, m=3); then the sparse container.
	require.Equal(t, []byte{1, 3, 0, 0, 1, 0, 0x00, 0x00, 0x03, 0x00, 0x22, 0xff}, b)

	var dense []uint32
	for p := uint32(256); p < 256+33; p++ {
		dense = append(dense, p)
	}
	b, err = Encode(dense)
	require.NoError(t, err)
	body := b[len(b)-32:]
	require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0x80}, body[:5], "positions 0-32 of the container, most significant bit first")
	got, err := Decode(b)
	require.NoError(t, err)
	require.Equal(t, dense, got)
}

func TestRoundTrip(t *testing.T) {
	for _, ps := range [][]uint32{
		nil,
		{0},
		{MaxPosition},
		{5, 5, 3},
		seq(0, 2048),
		seq(100_000, 100_040),
		{1, 300, 70_000, 70_001, 2_000_000},
	} {
		b, err := Encode(ps)
		require.NoError(t, err)
		got, err := Decode(b)
		require.NoError(t, err)
		want := slices.Compact(slices.Sorted(slices.Values(ps)))
		if len(want) == 0 {
			want = []uint32{}
		}
		require.Equal(t, want, got)
	}
	_, err := Encode([]uint32{MaxPosition + 1})
	require.Error(t, err)
}

func TestDecodeRejects(t *testing.T) {
	good, err := Encode([]uint32{1, 2, 3, 600})
	require.NoError(t, err)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{2}, good[1:]...),
		"truncated": good[:len(good)-1],
		"trailing":  append(slices.Clone(good), 0),
		"card":      append([]byte{1, 9}, good[2:]...),
		"reserved":  {1, 0, 0, 0, 1, 0, 0x00, 0x00, 0x40},
		"unsorted":  {1, 2, 0, 0, 1, 0, 0x00, 0x00, 0x02, 0x05, 0x04},
	} {
		_, err := Decode(b)
		require.ErrorIs(t, err, ErrMalformed, name)
	}
}

func seq(from, to uint32) []uint32 {
	var out []uint32
	for p := from; p < to; p++ {
		out = append(out, p)
	}
	return out
}

// FuzzRoundTrip: any set of positions encodes and decodes to itself, and
// Decode never panics on arbitrary bytes.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 2})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := Decode(raw); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("Decode error without ErrMalformed: %v", err)
		}
		var ps []uint32
		for i := 0; i+3 <= len(raw); i += 3 {
			ps = append(ps, (uint32(raw[i])|uint32(raw[i+1])<<8|uint32(raw[i+2])<<16)%(MaxPosition+1))
		}
		b, err := Encode(ps)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Compact(slices.Sorted(slices.Values(ps)))
		if !slices.Equal(want, got) {
			t.Fatalf("round trip: %v -> %v", want, got)
		}
	})
}

// TestCardinality counts positions (duplicates once, dense containers
// too) and refuses a bitmap whose header count its containers belie.
func TestCardinality(t *testing.T) {
	for _, ps := range [][]uint32{nil, {7, 7, 3}, seq(0, 40), append(seq(256, 600), MaxPosition)} {
		b, err := Encode(ps)
		require.NoError(t, err)
		n, err := Cardinality(b)
		require.NoError(t, err)
		require.Equal(t, len(slices.Compact(slices.Sorted(slices.Values(ps)))), n)
	}
	good, err := Encode([]uint32{1, 2, 3})
	require.NoError(t, err)
	_, err = Cardinality(append([]byte{1, 2}, good[2:]...))
	require.ErrorIs(t, err, ErrMalformed)
}
