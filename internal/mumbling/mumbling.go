// Package mumbling encodes and decodes Mumbling bitmaps (version 1), the
// compressed position sets Iceberg v4 uses for manifest deletion vectors
// (manifest_info.dv) and their per-snapshot deltas (tracking
// deleted_positions and replaced_positions). The format is Iceberg's
// format/mumbling-spec.md: a 6-byte header, a PFOR-encoded array of one
// descriptor byte per 256-position container, then the containers, each
// sparse (up to 31 offsets) or dense (a 32-byte bit set).
//
// The package is pure: bytes in, positions out, or an error.
package mumbling

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// MaxPosition is the largest position a bitmap can hold (8,192 containers
// of 256 positions).
const MaxPosition = 8192*256 - 1

// ErrMalformed is returned (wrapped) by Decode for bytes that are not a
// version 1 Mumbling bitmap.
var ErrMalformed = errors.New("mumbling: malformed bitmap")

const (
	version     = 1
	headerSize  = 6
	denseSize   = 32
	denseMark   = 0x20 // descriptor of a dense container
	sparseLimit = 32   // a container with this many positions is dense
	chunk       = 256  // PFOR chunk length
)

// Encode returns the bitmap holding positions (in any order; duplicates
// count once). It fails when a position is above MaxPosition.
func Encode(positions []uint32) ([]byte, error) {
	ps := slices.Clone(positions)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	if len(ps) > 0 && ps[len(ps)-1] > MaxPosition {
		return nil, fmt.Errorf("mumbling: position %d is above the maximum %d", ps[len(ps)-1], MaxPosition)
	}
	nContainers := 0
	if len(ps) > 0 {
		nContainers = int(ps[len(ps)-1]>>8) + 1
	}
	desc := make([]byte, nContainers)
	var body []byte
	for i := 0; i < len(ps); {
		key := ps[i] >> 8
		j := i
		for j < len(ps) && ps[j]>>8 == key {
			j++
		}
		body = appendContainer(body, ps[i:j], &desc[key])
		i = j
	}
	card := len(ps)
	out := []byte{version, byte(card), byte(card >> 8), byte(card >> 16), byte(nContainers), byte(nContainers >> 8)}
	for start := 0; start < len(desc); start += chunk {
		out = appendPFOR(out, desc[start:min(start+chunk, len(desc))])
	}
	return append(out, body...), nil
}

// appendContainer writes the container of positions ps (one key, sorted)
// and sets its descriptor.
func appendContainer(body []byte, ps []uint32, desc *byte) []byte {
	if len(ps) < sparseLimit {
		*desc = byte(len(ps))
		for _, p := range ps {
			body = append(body, byte(p))
		}
		return body
	}
	*desc = denseMark
	var set [denseSize]byte
	for _, p := range ps {
		off := byte(p)
		set[off/8] |= 0x80 >> (off % 8)
	}
	return append(body, set[:]...)
}

// width is the number of bits v needs (0 for 0).
func width(v byte) int { return bits.Len8(v) }

// appendPFOR encodes one chunk of at most 256 bytes: the primary width is
// the one that makes the chunk smallest (the narrowest on a tie).
func appendPFOR(out []byte, vals []byte) []byte {
	m := slices.Min(vals)
	var count [9]int
	maxW := 0
	for _, v := range vals {
		w := width(v - m)
		count[w]++
		maxW = max(maxW, w)
	}
	best, bestSize := 0, -1
	for b := 0; b <= 8; b++ {
		e := 0
		for w := b + 1; w <= 8; w++ {
			e += count[w]
		}
		b2 := 0
		if e > 0 {
			b2 = maxW - b
		}
		size := (len(vals)*b+7)/8 + e + (e*b2+7)/8
		if bestSize < 0 || size < bestSize {
			best, bestSize = b, size
		}
	}
	b1 := best
	if b1 == 8 {
		m = 0 // stored as they are, as the spec recommends
	}
	var offs, exc []byte
	b2 := 0
	for i, v := range vals {
		if width(v-m) > b1 {
			offs = append(offs, byte(i))
			exc = append(exc, (v-m)>>b1)
		}
	}
	if len(offs) > 0 {
		b2 = maxW - b1
	}
	out = append(out, byte(b1)|byte(b2)<<4, byte(len(offs)), m)
	norm := make([]byte, len(vals))
	for i, v := range vals {
		norm[i] = (v - m) & byte(1<<b1-1)
	}
	out = appendPacked(out, norm, b1)
	out = append(out, offs...)
	return appendPacked(out, exc, b2)
}

// appendPacked packs the low w bits of each value, most significant bit
// first, padded with zeros to a byte.
func appendPacked(out []byte, vals []byte, w int) []byte {
	if w == 0 {
		return out
	}
	var acc uint32
	n := 0
	for _, v := range vals {
		acc = acc<<w | uint32(v)&(1<<w-1)
		n += w
		for n >= 8 {
			out = append(out, byte(acc>>(n-8)))
			n -= 8
		}
	}
	if n > 0 {
		out = append(out, byte(acc<<(8-n)))
	}
	return out
}

// Cardinality returns the number of positions in a bitmap, after checking
// the whole bitmap as Decode does (the header's count alone could be
// wrong). Errors wrap ErrMalformed.
func Cardinality(b []byte) (int, error) {
	ps, err := Decode(b)
	return len(ps), err
}

// Decode returns the positions of a bitmap, ascending. Errors wrap
// ErrMalformed: another version, a truncated or over-long body, a reserved
// descriptor, unsorted offsets, or a cardinality that does not match.
func Decode(b []byte) ([]uint32, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrMalformed, len(b))
	}
	if b[0] != version {
		return nil, fmt.Errorf("%w: version %d", ErrMalformed, b[0])
	}
	card := int(b[1]) | int(b[2])<<8 | int(b[3])<<16
	n := int(b[4]) | int(b[5])<<8
	if n > 8192 {
		return nil, fmt.Errorf("%w: %d containers", ErrMalformed, n)
	}
	r := reader{b: b, at: headerSize}
	desc := make([]byte, 0, n)
	for len(desc) < n {
		var err error
		if desc, err = r.pfor(desc, min(chunk, n-len(desc))); err != nil {
			return nil, err
		}
	}
	out := make([]uint32, 0, card)
	for key, d := range desc {
		base := uint32(key) << 8
		switch {
		case d>>5 == 0:
			vals, err := r.take(int(d))
			if err != nil {
				return nil, err
			}
			for i, v := range vals {
				if i > 0 && v <= vals[i-1] {
					return nil, fmt.Errorf("%w: sparse container %d is not sorted", ErrMalformed, key)
				}
				out = append(out, base|uint32(v))
			}
		case d>>5 == 1:
			set, err := r.take(denseSize)
			if err != nil {
				return nil, err
			}
			for i := 0; i < 256; i++ {
				if set[i/8]&(0x80>>(i%8)) != 0 {
					out = append(out, base|uint32(i))
				}
			}
		default:
			return nil, fmt.Errorf("%w: reserved descriptor %#x", ErrMalformed, d)
		}
	}
	if r.at != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.at)
	}
	if len(out) != card {
		return nil, fmt.Errorf("%w: header says %d positions, containers hold %d", ErrMalformed, card, len(out))
	}
	return out, nil
}

type reader struct {
	b  []byte
	at int
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || r.at+n > len(r.b) {
		return nil, fmt.Errorf("%w: truncated", ErrMalformed)
	}
	out := r.b[r.at : r.at+n]
	r.at += n
	return out, nil
}

// pfor decodes one chunk of n values onto out.
func (r *reader) pfor(out []byte, n int) ([]byte, error) {
	h, err := r.take(3)
	if err != nil {
		return nil, err
	}
	b1, b2, e, m := int(h[0]&0x0f), int(h[0]>>4), int(h[1]), h[2]
	if b1 > 8 || b1+b2 > 8 || e > n {
		return nil, fmt.Errorf("%w: PFOR header b1=%d b2=%d e=%d for %d values", ErrMalformed, b1, b2, e, n)
	}
	primary, err := r.take((n*b1 + 7) / 8)
	if err != nil {
		return nil, err
	}
	vals := unpack(primary, n, b1)
	offs, err := r.take(e)
	if err != nil {
		return nil, err
	}
	packed, err := r.take((e*b2 + 7) / 8)
	if err != nil {
		return nil, err
	}
	exc := unpack(packed, e, b2)
	for i, off := range offs {
		if int(off) >= n {
			return nil, fmt.Errorf("%w: PFOR exception at %d of %d values", ErrMalformed, off, n)
		}
		vals[off] |= exc[i] << b1
	}
	for _, v := range vals {
		if int(v)+int(m) > 255 {
			return nil, fmt.Errorf("%w: PFOR value overflows a byte", ErrMalformed)
		}
		out = append(out, v+m)
	}
	return out, nil
}

// unpack reads n values of w bits each, most significant bit first.
func unpack(b []byte, n, w int) []byte {
	out := make([]byte, n)
	if w == 0 {
		return out
	}
	bit := 0
	for i := range out {
		var v byte
		for k := 0; k < w; k++ {
			v = v<<1 | (b[bit/8]>>(7-bit%8))&1
			bit++
		}
		out[i] = v
	}
	return out
}
