package compact

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/internal/parquetstats"
)

// Table properties that set the planning thresholds.
const (
	// PropMaxFiles: a base with more live column files than this is
	// folded (default DefaultMaxFiles).
	PropMaxFiles = "write.column-files.compact.max-files"
	// PropMaxRetiredRatio: a base whose retired bytes exceed this share of
	// its own size is folded (default DefaultMaxRetiredRatio).
	PropMaxRetiredRatio = "write.column-files.compact.max-retired-ratio"
)

// Threshold defaults: eight column files already make a read open nine
// files per base; past half its size in dead bytes a base costs more to
// keep than to rewrite.
const (
	DefaultMaxFiles        = 8
	DefaultMaxRetiredRatio = 0.5
)

// Thresholds decide which bases are worth folding.
type Thresholds struct {
	MaxFiles        int
	MaxRetiredRatio float64
}

// ThresholdsFrom reads the thresholds from table properties, defaults for
// absent ones: an error names the property when a value does not parse or
// is negative.
func ThresholdsFrom(props map[string]string) (Thresholds, error) {
	th := Thresholds{MaxFiles: DefaultMaxFiles, MaxRetiredRatio: DefaultMaxRetiredRatio}
	if v, ok := props[PropMaxFiles]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return th, fmt.Errorf("table property %s=%q: want a non-negative integer", PropMaxFiles, v)
		}
		th.MaxFiles = n
	}
	if v, ok := props[PropMaxRetiredRatio]; ok {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r != r {
			return th, fmt.Errorf("table property %s=%q: want a non-negative number", PropMaxRetiredRatio, v)
		}
		th.MaxRetiredRatio = r
	}
	return th, nil
}

// FoldAll are thresholds that pick every base with column files, whatever
// the table's (what an export needs first); with deletes also every base
// with a deletion vector.
func FoldAll(deletes bool) Thresholds {
	th := Thresholds{MaxFiles: 0, MaxRetiredRatio: math.MaxFloat64}
	if deletes {
		th.MaxRetiredRatio = -1
	}
	return th
}

// Base is what planning knows of one live base file.
type Base struct {
	Location    string
	RecordCount int64
	SizeInBytes int64
	ColumnFiles int
	// Deleted is the deletion vector's cardinality (0 without one).
	Deleted int64
	// Retired is the bytes no read uses (see Retired).
	Retired int64
}

// Reasons a base is picked.
const (
	ReasonTooManyFiles   = "too-many-column-files"
	ReasonRetiredBytes   = "retired-bytes"
	ReasonAllRowsDeleted = "all-rows-deleted"
)

// Pick is a base chosen for folding, with why.
type Pick struct {
	Base
	RetiredRatio float64
	Reasons      []string
}

// Select picks, in location order, the bases that have column files or a
// deletion vector and either more column files than th.MaxFiles or a
// retired/size ratio above th.MaxRetiredRatio. A base with nothing to fold
// is never picked, whatever the thresholds.
func Select(bases []Base, th Thresholds) []Pick {
	var out []Pick
	for _, b := range bases {
		if b.ColumnFiles == 0 && b.Deleted == 0 {
			continue
		}
		p := Pick{Base: b}
		if b.SizeInBytes > 0 {
			p.RetiredRatio = float64(b.Retired) / float64(b.SizeInBytes)
		}
		if b.ColumnFiles > th.MaxFiles {
			p.Reasons = append(p.Reasons, ReasonTooManyFiles)
		}
		if p.RetiredRatio > th.MaxRetiredRatio {
			p.Reasons = append(p.Reasons, ReasonRetiredBytes)
		}
		if b.RecordCount > 0 && b.Deleted >= b.RecordCount {
			p.Reasons = append(p.Reasons, ReasonAllRowsDeleted)
		}
		if len(p.Reasons) > 0 {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Pick) int {
		switch {
		case a.Location < b.Location:
			return -1
		case a.Location > b.Location:
			return 1
		}
		return 0
	})
	return out
}

// FileColumns is one file's stored bytes by top-level field id and the
// field ids a read still takes from it.
type FileColumns struct {
	Bytes map[int]int64
	Live  []int
}

// Retired is the bytes of a base and its column files that no read uses:
// the base's columns a column file supersedes, the columns of a column file
// that a newer one superseded, and the deleted rows' share (deleted/rows)
// of the bytes still read. base.Live is ignored: a base serves every field
// no column file lists.
func Retired(base map[int]int64, files []FileColumns, rows, deleted int64) int64 {
	var retired, live int64
	covered := map[int]bool{}
	for _, f := range files {
		for _, id := range f.Live {
			covered[id] = true
		}
		for id, n := range f.Bytes {
			if slices.Contains(f.Live, id) {
				live += n
			} else {
				retired += n
			}
		}
	}
	for id, n := range base {
		if covered[id] {
			retired += n
		} else {
			live += n
		}
	}
	if rows > 0 && deleted > 0 {
		retired += int64(float64(live) * float64(min(deleted, rows)) / float64(rows))
	}
	return retired
}

// ColumnBytes reads a Parquet footer and sums the compressed bytes of each
// top-level field's column chunks (a column without a field id counts
// under the one the table's name mapping nm gives it, else under -1): an
// error when the footer is unreadable.
func ColumnBytes(r parquet.ReaderAtSeeker, nm iceberg.NameMapping) (out map[int]int64, err error) {
	defer func() {
		if p := recover(); p != nil { // a corrupt footer can panic the library
			out, err = nil, fmt.Errorf("compact: corrupt parquet footer: %v", p)
		}
	}()
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	defer pf.Close()
	md := pf.MetaData()
	ids := parquetstats.FieldIDs(md.Schema.Root(), nm)
	out = map[int]int64{}
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return nil, fmt.Errorf("compact: %w", err)
			}
			id, ok := ids[md.Schema.ColumnRoot(c)]
			if !ok {
				id = -1
			}
			out[id] += cc.TotalCompressedSize()
		}
	}
	return out, nil
}
