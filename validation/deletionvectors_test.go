package validation_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/validation"
)

func reasonOf(err error) string {
	var ve *validation.Error
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return ""
}

func TestMatchDVBlob(t *testing.T) {
	card := func(n int64) *int64 { return &n }
	req := validation.DeletionVector{DataFile: "s3://b/t/data/a.parquet", Name: "data/a.parquet", Offset: 4, SizeInBytes: 40, Cardinality: 3}
	dvAt := func(off, n int64) validation.PuffinBlob {
		return validation.PuffinBlob{Type: validation.DVBlobType, Offset: off, Length: n, ReferencedDataFile: req.DataFile, Cardinality: card(3)}
	}
	edit := func(b validation.PuffinBlob, fn func(*validation.PuffinBlob)) validation.PuffinBlob { fn(&b); return b }
	cases := []struct {
		name    string
		blobs   []validation.PuffinBlob
		readErr string
		reason  string
		index   int
	}{
		{"match", []validation.PuffinBlob{dvAt(44, 10), dvAt(4, 40)}, "", "", 1},
		{"no properties", []validation.PuffinBlob{edit(dvAt(4, 40), func(b *validation.PuffinBlob) { b.ReferencedDataFile, b.Cardinality = "", nil })}, "", "", 0},
		{"unreadable", nil, "not a Puffin file", validation.ReasonDVUnreadable, -1},
		{"empty footer", nil, "", validation.ReasonDVBlobNotFound, -1},
		{"other offset", []validation.PuffinBlob{dvAt(5, 40)}, "", validation.ReasonDVBlobNotFound, -1},
		{"other length", []validation.PuffinBlob{dvAt(4, 39)}, "", validation.ReasonDVBlobNotFound, -1},
		{"other type", []validation.PuffinBlob{edit(dvAt(4, 40), func(b *validation.PuffinBlob) { b.Type = "apache-datasketches-theta-v1" })}, "", validation.ReasonDVBlobType, -1},
		{"compressed", []validation.PuffinBlob{edit(dvAt(4, 40), func(b *validation.PuffinBlob) { b.Compressed = true })}, "", validation.ReasonDVBlobType, -1},
		{"other data file", []validation.PuffinBlob{edit(dvAt(4, 40), func(b *validation.PuffinBlob) { b.ReferencedDataFile = "s3://b/t/data/b.parquet" })}, "", validation.ReasonDVReferencedDataFile, -1},
		{"other cardinality", []validation.PuffinBlob{edit(dvAt(4, 40), func(b *validation.PuffinBlob) { b.Cardinality = card(2) })}, "", validation.ReasonDVCardinalityMismatch, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			i, err := validation.MatchDVBlob(req, c.blobs, c.readErr)
			require.Equal(t, c.reason, reasonOf(err))
			require.Equal(t, c.index, i)
			if err != nil {
				require.Contains(t, err.Error(), "data/a.parquet")
			}
		})
	}
}

func TestCheckDVContentAndPositions(t *testing.T) {
	req := validation.DeletionVector{Name: "data/a.parquet", Cardinality: 2}
	require.NoError(t, validation.CheckDVContent(req, validation.DecodedDV{Cardinality: 2, MaxPosition: 9}))
	require.Equal(t, validation.ReasonDVCorrupt, reasonOf(validation.CheckDVContent(req, validation.DecodedDV{DecodeErr: "bad checksum"})))
	require.Equal(t, validation.ReasonDVCardinalityMismatch, reasonOf(validation.CheckDVContent(req, validation.DecodedDV{Cardinality: 3})))
	require.NoError(t, validation.CheckDVPositions("a", 9, 10))
	require.NoError(t, validation.CheckDVPositions("a", -1, 0), "an empty vector deletes nothing")
	require.Equal(t, validation.ReasonDVPositionOutOfRange, reasonOf(validation.CheckDVPositions("a", 10, 10)))
}
