package v4manifest

import (
	"errors"
	"fmt"
	"slices"
)

// ErrProjected is ReadBack's refusal of a projecting read (Columns or
// StatsFields set): it only stands in for reads of every column.
var ErrProjected = errors.New("v4manifest: ReadBack reads every column only")

// ReadBack returns what a Reader with opts returns for a manifest that a
// Writer with table location writeLoc wrote from rows, without the
// manifest: the file's rows as written are what it decodes to (the
// round-trip tests hold the writer and reader to that), so a process
// that has just written a manifest can keep its rows and skip decoding
// it, which on a wide table is milliseconds of per-column work whatever
// the row count. Locations are stored as the writer stores them and
// resolved as the reader resolves them; inheritance, positions, the
// manifest deletion vector and Positions apply as in Reader.Each. rows
// are not modified; the result shares their stats and partition maps,
// which callers must not modify. It returns ErrProjected for a
// projecting opts and an ErrMalformed error when opts.InheritFrom's
// manifest deletion vector does not decode.
func ReadBack(rows []TrackedFile, writeLoc string, opts ReaderOptions) ([]TrackedFile, error) {
	if opts.Columns != nil || opts.StatsFields != nil {
		return nil, ErrProjected
	}
	var inh *inheritState
	var masked map[int64]bool
	if opts.InheritFrom != nil {
		inh = newInheritState(*opts.InheritFrom)
		var err error
		if masked, err = opts.InheritFrom.MaskedPositions(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	out := make([]TrackedFile, 0, len(rows))
	for i := range rows {
		tf := stored(rows[i], writeLoc)
		pos := int64(i)
		if inh != nil && opts.Positions != nil && !opts.Positions[pos] {
			inh.apply(&tf) // it still moves the first row ids on
			continue
		}
		if opts.TableLocation != "" {
			resolveLocations(opts.TableLocation, &tf)
		}
		if inh != nil {
			inh.apply(&tf)
			tf.Pos = pos
			if masked[pos] && !opts.IncludeMasked {
				continue
			}
		}
		out = append(out, tf)
	}
	return out, nil
}

// stored is row as a Writer with table location writeLoc stores it: its
// locations relative to the table, no position. The deletion vector and
// column files are copied, so resolving the result's locations leaves
// row's alone.
func stored(row TrackedFile, writeLoc string) TrackedFile {
	rel := func(s string) string {
		if writeLoc == "" {
			return s
		}
		return Relativize(writeLoc, s)
	}
	row.Pos = 0
	if row.Location != "" {
		row.Location = rel(row.Location)
	}
	if row.DeletionVector != nil {
		dv := *row.DeletionVector
		dv.Location = rel(dv.Location)
		row.DeletionVector = &dv
	}
	if row.ColumnFiles != nil {
		row.ColumnFiles = slices.Clone(row.ColumnFiles)
		for i := range row.ColumnFiles {
			row.ColumnFiles[i].Location = rel(row.ColumnFiles[i].Location)
		}
	}
	return row
}
