// Package v4export turns the live rows of a format version 4 snapshot back
// into the Avro manifests and manifest list of a format v1–v3 snapshot, for
// the export of a v4 table to a table every engine reads (docs/column-files.md,
// "The way back").
//
// It is pure: rows already moved to their new locations, the table's schema
// and specs go in; manifest and manifest list bytes come out. Files are
// written as EXISTING entries that keep their data and file sequence numbers
// and, in format 3, their first_row_id, so that every row keeps its _row_id
// and _last_updated_sequence_number. Deletion vectors become format 3
// deletion-vector delete files; equality deletes stay equality deletes.
// What the target format cannot hold is refused with an *UnsupportedError
// before anything is written (Check).
package v4export

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

// Input is one v4 snapshot's live rows and what the export needs to
// describe them in format FormatVersion.
type Input struct {
	// FormatVersion is the target format: 1, 2 or 3.
	FormatVersion int
	// Schema is the table's current schema; it types the stats bounds.
	Schema *iceberg.Schema
	// Specs are all partition specs of the table.
	Specs []iceberg.PartitionSpec
	// SnapshotID is the id of the exported snapshot.
	SnapshotID int64
	// SequenceNumber is the exported snapshot's sequence number: the
	// source table's last sequence number, so that no file's is above it.
	SequenceNumber int64
	// FirstRowID is, in format 3, the source table's next-row-id: the
	// export assigns no id below it (every file keeps its own).
	FirstRowID int64
	// Data are the live data rows; EqualityDeletes the live equality-delete
	// rows. Locations (and deletion vector locations) are absolute and
	// already those of the copies.
	Data, EqualityDeletes []v4manifest.TrackedFile
	// ManifestLocation names manifest n (0, 1, ...).
	ManifestLocation func(n int) string
}

// File is one file the export writes.
type File struct {
	Location string
	Data     []byte
}

// Output is the exported snapshot.
type Output struct {
	// Manifests are the manifests the list references.
	Manifests []File
	// ManifestList is the manifest list's bytes.
	ManifestList []byte
	// Summary is the snapshot summary (operation included).
	Summary map[string]string
	// AddedRows is, in format 3, the snapshot's added-rows: every id from 0
	// to NextRowID, as the snapshot's first-row-id is 0 (ids already in use
	// stay below NextRowID).
	AddedRows int64
	// NextRowID is the exported table's next-row-id (format 3).
	NextRowID int64
}

// UnsupportedError is a snapshot the target format cannot hold.
type UnsupportedError struct {
	// Reason is a stable token (ReasonColumnFiles, ...).
	Reason string
	// What says what cannot be exported; Count how many files have it;
	// Example is one of them, relative to the table.
	What    string
	Count   int
	Example string
	// Hint is what to do about it.
	Hint string
}

// Reasons for an UnsupportedError.
const (
	ReasonColumnFiles     = "column-files-pending"
	ReasonDeletionVectors = "deletion-vectors-need-v3"
	ReasonEqualityDeletes = "equality-deletes-need-v2"
	ReasonFormatVersion   = "unsupported-format-version"
)

func (e *UnsupportedError) Error() string {
	if e.Count == 0 {
		return fmt.Sprintf("cannot export: %s; %s", e.What, e.Hint)
	}
	return fmt.Sprintf("cannot export %d %s (e.g. %s); %s", e.Count, e.What, e.Example, e.Hint)
}

// Check refuses, before anything is copied, a snapshot that version cannot
// hold: data files with column files (a v1–v3 reader would read the base's
// stale columns), deletion vectors below format 3, equality deletes in
// format 1. rel shortens a location for the message.
func Check(version int, data, eqDeletes []v4manifest.TrackedFile, rel func(string) string) error {
	if version < 1 || version > 3 {
		return &UnsupportedError{Reason: ReasonFormatVersion, What: fmt.Sprintf("to format version %d", version),
			Hint: "a v4 table exports to format version 1, 2 or 3"}
	}
	count := func(has func(*v4manifest.TrackedFile) bool) (int, string) {
		n, ex := 0, ""
		for i := range data {
			if has(&data[i]) {
				if n == 0 {
					ex = rel(data[i].Location)
				}
				n++
			}
		}
		return n, ex
	}
	if n, ex := count(func(r *v4manifest.TrackedFile) bool { return len(r.ColumnFiles) > 0 }); n > 0 {
		return &UnsupportedError{Reason: ReasonColumnFiles, What: "data files with column files", Count: n, Example: ex,
			Hint: "fold them into their base files first (export with \"compact\": true, or run `catalog compact --all`)"}
	}
	if n, ex := count(func(r *v4manifest.TrackedFile) bool { return r.DeletionVector != nil }); n > 0 && version < 3 {
		return &UnsupportedError{Reason: ReasonDeletionVectors, What: "data files with deletion vectors", Count: n, Example: ex,
			Hint: fmt.Sprintf("format version %d has no deletion vectors: export to format version 3, or compact first (which drops deleted rows)", version)}
	}
	if len(eqDeletes) > 0 && version < 2 {
		return &UnsupportedError{Reason: ReasonEqualityDeletes, What: "equality delete files", Count: len(eqDeletes),
			Example: rel(eqDeletes[0].Location), Hint: "format version 1 has no delete files: export to format version 2 or 3"}
	}
	return nil
}

// Build writes the manifests (one per partition spec and content) and the
// manifest list of in. An error is an *UnsupportedError from Check, or one
// naming the file whose row does not encode (a partition or bound value of
// an unexpected type).
func Build(in Input) (*Output, error) {
	if err := Check(in.FormatVersion, in.Data, in.EqualityDeletes, func(s string) string { return s }); err != nil {
		return nil, err
	}
	specs := make(map[int]iceberg.PartitionSpec, len(in.Specs))
	for _, s := range in.Specs {
		specs[s.ID()] = s
	}
	groups, err := entries(in, specs)
	if err != nil {
		return nil, err
	}
	out := &Output{Summary: summary(in)}
	var files []iceberg.ManifestFile
	for _, g := range groups {
		loc := in.ManifestLocation(len(out.Manifests))
		data, mf, err := writeManifest(in, specs[g.spec], g, loc)
		if err != nil {
			return nil, err
		}
		out.Manifests = append(out.Manifests, File{Location: loc, Data: data})
		files = append(files, mf)
	}
	var list bytes.Buffer
	seq := in.SequenceNumber
	if err := iceberg.WriteManifestList(in.FormatVersion, &list, in.SnapshotID, nil, &seq, in.FirstRowID, files); err != nil {
		return nil, fmt.Errorf("write manifest list: %w", err)
	}
	out.ManifestList = list.Bytes()
	if in.FormatVersion >= 3 {
		out.NextRowID = in.FirstRowID
		for _, mf := range files {
			if mf.ManifestContent() == iceberg.ManifestContentData {
				out.NextRowID += mf.ExistingRows() + mf.AddedRows()
			}
		}
		out.AddedRows = out.NextRowID
	}
	return out, nil
}

// group is the entries of one manifest: one spec, one content.
type group struct {
	spec    int
	deletes bool
	entries []iceberg.ManifestEntry
}

// entries converts every row (and deletion vector) to an EXISTING entry,
// grouped by spec and content in a stable order.
func entries(in Input, specs map[int]iceberg.PartitionSpec) ([]*group, error) {
	byKey := map[[2]int]*group{}
	add := func(spec int, deletes bool, e iceberg.ManifestEntry) {
		k := [2]int{spec, 0}
		if deletes {
			k[1] = 1
		}
		g := byKey[k]
		if g == nil {
			g = &group{spec: spec, deletes: deletes}
			byKey[k] = g
		}
		g.entries = append(g.entries, e)
	}
	conv := converter{in: in, specs: specs}
	for i := range in.Data {
		r := &in.Data[i]
		spec, e, err := conv.entry(r, iceberg.EntryContentData)
		if err != nil {
			return nil, err
		}
		add(spec, false, e)
		if r.DeletionVector != nil {
			dv, err := conv.dvEntry(r, spec)
			if err != nil {
				return nil, err
			}
			add(spec, true, dv)
		}
	}
	for i := range in.EqualityDeletes {
		spec, e, err := conv.entry(&in.EqualityDeletes[i], iceberg.EntryContentEqDeletes)
		if err != nil {
			return nil, err
		}
		add(spec, true, e)
	}
	out := make([]*group, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *group) int {
		if a.deletes != b.deletes {
			if a.deletes {
				return 1
			}
			return -1
		}
		return a.spec - b.spec
	})
	return out, nil
}

// writeManifest writes one group as a manifest of in.FormatVersion.
func writeManifest(in Input, spec iceberg.PartitionSpec, g *group, loc string) ([]byte, iceberg.ManifestFile, error) {
	var buf bytes.Buffer
	var opts []iceberg.ManifestWriterOption
	if g.deletes {
		opts = append(opts, iceberg.WithManifestWriterContent(iceberg.ManifestContentDeletes))
	}
	w, err := iceberg.NewManifestWriter(in.FormatVersion, &buf, spec, in.Schema, in.SnapshotID, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("manifest of spec %d: %w", g.spec, err)
	}
	for _, e := range g.entries {
		if err := w.Existing(e); err != nil {
			return nil, nil, fmt.Errorf("manifest entry %s: %w", e.DataFile().FilePath(), err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, nil, fmt.Errorf("manifest of spec %d: %w", g.spec, err)
	}
	mf, err := w.ToManifestFile(loc, int64(buf.Len()))
	if err != nil {
		return nil, nil, fmt.Errorf("manifest of spec %d: %w", g.spec, err)
	}
	return buf.Bytes(), mf, nil
}

// summary is the exported snapshot's summary: an append of nothing new,
// whose totals describe the whole table.
func summary(in Input) map[string]string {
	var records, size, dvs, deleted, eqRecords int64
	for i := range in.Data {
		r := &in.Data[i]
		records += r.RecordCount
		size += r.FileSizeInBytes
		if r.DeletionVector != nil {
			dvs++
			deleted += r.DeletionVector.Cardinality
		}
	}
	for i := range in.EqualityDeletes {
		eqRecords += in.EqualityDeletes[i].RecordCount
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	s := map[string]string{
		"operation":              "append",
		"total-data-files":       itoa(int64(len(in.Data))),
		"total-records":          itoa(records),
		"total-files-size":       itoa(size),
		"total-delete-files":     itoa(dvs + int64(len(in.EqualityDeletes))),
		"total-position-deletes": itoa(deleted),
		"total-equality-deletes": itoa(eqRecords),
	}
	return s
}
