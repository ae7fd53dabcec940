package v4commits

import (
	"context"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table/dv"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// MaxDVBlob bounds the deletion vector blob the server reads to check a
// request: far above a DV of a billion-row file with scattered deletes,
// small enough that a few requests cannot exhaust memory.
const MaxDVBlob = 64 << 20

// checkDeletionVectors reads the Puffin file of every deletion vector a
// files commit sets and checks it against the request (blob range, type,
// referenced data file, cardinality, decodability), at most footerReaders
// files at a time. It returns the largest deleted position of each vector,
// by data file, for the tree rewrite to check against the file's rows, or a
// 400 ValidationException with a deletion-vector-* reason.
func (cm *Committer) checkDeletionVectors(ctx context.Context, w *store.Warehouse, st *State, dvs map[string]v4manifest.DeletionVector) (map[string]int64, error) {
	bases := make([]string, 0, len(dvs))
	for b := range dvs {
		bases = append(bases, b)
	}
	slices.Sort(bases) // the first failure reported is the same on every try
	errs := make([]error, len(bases))
	maxPos := make([]int64, len(bases))
	var g errgroup.Group
	g.SetLimit(footerReaders)
	for i, base := range bases {
		g.Go(func() error {
			maxPos[i], errs[i] = cm.checkDeletionVector(ctx, w, st, base, dvs[base])
			return nil
		})
	}
	_ = g.Wait() // workers report failures in errs
	out := make(map[string]int64, len(bases))
	for i, base := range bases {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[base] = maxPos[i]
	}
	return out, nil
}

// checkDeletionVector checks one deletion vector and returns its largest
// deleted position (-1 when it deletes nothing).
func (cm *Committer) checkDeletionVector(ctx context.Context, w *store.Warehouse, st *State, base string, d v4manifest.DeletionVector) (int64, error) {
	req := validation.DeletionVector{DataFile: base, Name: locations.TableFileName(st.location, base),
		Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	if d.SizeInBytes > MaxDVBlob {
		_, err := validation.MatchDVBlob(req, nil, "the blob is larger than the server reads ("+strconv.Itoa(MaxDVBlob>>20)+" MiB)")
		return 0, err
	}
	r, closeFile, blobs, readErr := cm.openPuffin(ctx, w, st, d.Location)
	if closeFile != nil {
		defer closeFile()
	}
	i, err := validation.MatchDVBlob(req, blobs, readErr)
	if err != nil {
		return 0, err
	}
	got := validation.DecodedDV{MaxPosition: -1}
	data, err := r.ReadBlobByMetadata(r.Blobs()[i])
	if err != nil {
		got.DecodeErr = "the blob cannot be read"
	} else if bm, err := dv.DeserializeDV(data, -1); err != nil {
		got.DecodeErr = "the blob is not a valid deletion-vector-v1 (length, magic, checksum or bitmap)"
	} else {
		got.Cardinality = bm.Cardinality()
		for p := range bm.Positions() {
			got.MaxPosition = max(got.MaxPosition, int64(p))
		}
	}
	if err := validation.CheckDVContent(req, got); err != nil {
		return 0, err
	}
	return got.MaxPosition, nil
}

// openPuffin opens a Puffin file and reads its footer. On failure it
// returns a client-safe reason instead of an error (no paths or driver
// text), for validation to report.
func (cm *Committer) openPuffin(ctx context.Context, w *store.Warehouse, st *State, loc string) (*puffin.Reader, func(), []validation.PuffinBlob, string) {
	io, err := cm.d.Tables.FileIO(ctx, w, loc)
	if err != nil {
		return nil, nil, nil, "the Puffin file cannot be opened"
	}
	f, err := io.Open(ctx, loc)
	if err != nil {
		return nil, nil, nil, "the Puffin file does not exist or cannot be opened"
	}
	r, err := puffin.NewReader(f, puffin.WithMaxBlobSize(MaxDVBlob), puffin.WithMaxFooterSize(1<<20))
	if err != nil {
		f.Close()
		return nil, nil, nil, "the file is not a readable Puffin file"
	}
	var blobs []validation.PuffinBlob
	for _, b := range r.Blobs() {
		pb := validation.PuffinBlob{Type: string(b.Type), Offset: b.Offset, Length: b.Length,
			Compressed: b.CompressionCodec != nil && *b.CompressionCodec != ""}
		if ref := b.Properties["referenced-data-file"]; ref != "" {
			pb.ReferencedDataFile = v4manifest.Resolve(st.location, ref)
		}
		if c, err := strconv.ParseInt(b.Properties["cardinality"], 10, 64); err == nil {
			pb.Cardinality = &c
		}
		blobs = append(blobs, pb)
	}
	return r, func() { f.Close() }, blobs, ""
}
