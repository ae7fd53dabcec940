package sqlstore

import (
	"github.com/klauspost/compress/zstd"
)

// Metadata JSON is stored zstd-compressed: large tables (thousands of
// snapshots) shrink about tenfold, so the database reads and ships far fewer
// bytes on every load. Both coders are safe for concurrent use.
var (
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
)

func pack(b []byte) []byte { return encoder.EncodeAll(b, make([]byte, 0, len(b)/8+64)) }

func unpack(b []byte) ([]byte, error) { return decoder.DecodeAll(b, nil) }
