package sqlstore

import (
	"github.com/klauspost/compress/zstd"
)

// Metadata JSON is stored zstd-compressed: large tables (thousands of
// snapshots) shrink sixfold or more, so the database reads and ships far
// fewer bytes on every load. The fastest level: on a 3.6 MB document of
// 10,000 snapshots with random ids it took 10.7 ms against the default
// level's 16.7 ms, and came out smaller (591 KB against 632 KB); the
// compression sits on every commit's path. Both coders are safe for
// concurrent use. S2 (BenchmarkPack's document: 3.2 against 8 ms) was
// turned down: its output is 1.8 times zstd's, and Postgres then spends
// some 24 ms per row trying pglz on it (zstd's output it gives up on at
// once), unless the column's storage is changed to EXTERNAL.
var (
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
)

// rawBelow is the size under which a document is stored as it is: a small
// table's metadata (a few KB) barely shrinks, and decompressing it cost
// about a fifth of a loadTable's time in the service (BenchmarkLoadTable).
// Stored JSON starts with '{' and a zstd frame with its magic number
// (0x28), so unpack tells them apart; rows written before keep reading.
const rawBelow = 8 << 10

func pack(b []byte) []byte {
	if len(b) < rawBelow && len(b) > 0 && b[0] == '{' {
		return b
	}
	return encoder.EncodeAll(b, make([]byte, 0, len(b)/8+64))
}

func unpack(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == '{' {
		return b, nil
	}
	return decoder.DecodeAll(b, nil)
}
