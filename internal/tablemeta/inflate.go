package tablemeta

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// MaxInflatedMetadata bounds a gzip-compressed metadata file once
// decompressed, so that a small hostile file cannot exhaust memory.
const MaxInflatedMetadata = 256 << 20

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// Inflate returns a metadata file's JSON: b itself, or b decompressed when
// it is a gzip stream, as Iceberg writers produce with
// write.metadata.compression-codec=gzip (files named *.gz.metadata.json,
// or *.metadata.json.gz by older writers). The content decides, not the
// name. It returns an error when a gzip stream is corrupt or inflates past
// MaxInflatedMetadata.
func Inflate(b []byte) ([]byte, error) { return inflate(b, MaxInflatedMetadata) }

func inflate(b []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(b, gzipMagic) {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("gzip-compressed metadata: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("gzip-compressed metadata: %w", err)
	}
	if len(out) > limit {
		return nil, fmt.Errorf("gzip-compressed metadata inflates past %d bytes", limit)
	}
	return out, nil
}
