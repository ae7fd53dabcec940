package v4tree

import (
	"strconv"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

// Delta is what one commit adds to and removes from the table's live
// files, in the terms of the Iceberg spec's snapshot summary. Counts are
// per manifest row: a deletion vector is a delete file of its own, and a
// column file counts once for every base that references it.
//
// Sizes: a data file counts its own bytes plus those of its live column
// files, so total-files-size is what a full read of the table touches; a
// deletion vector counts its blob's size-in-bytes (as Iceberg counts a
// DV's content size, not the Puffin file's); an equality-delete file its
// own bytes. A column-file commit therefore changes the size totals but no
// file or record count, and a file whose column file is superseded loses
// that file's bytes.
type Delta struct {
	AddedDataFiles, DeletedDataFiles             int64
	AddedEqDeleteFiles, RemovedEqDeleteFiles     int64
	AddedDVs, RemovedDVs                         int64
	AddedRecords, DeletedRecords                 int64
	AddedFilesSize, RemovedFilesSize             int64
	AddedPositionDeletes, RemovedPositionDeletes int64
	AddedEqualityDeletes, RemovedEqualityDeletes int64
}

// addData counts data row r (its column files and deletion vector
// included) as added; removeData as removed.
func (d *Delta) addData(r *v4manifest.TrackedFile) {
	d.AddedDataFiles++
	d.AddedRecords += r.RecordCount
	d.AddedFilesSize += r.FileSizeInBytes
	for _, cf := range r.ColumnFiles {
		d.addColumnFile(cf.FileSizeInBytes)
	}
	if r.DeletionVector != nil {
		d.addDV(r.DeletionVector)
	}
}

func (d *Delta) removeData(r *v4manifest.TrackedFile) {
	d.DeletedDataFiles++
	d.DeletedRecords += r.RecordCount
	d.RemovedFilesSize += r.FileSizeInBytes
	for _, cf := range r.ColumnFiles {
		d.removeColumnFile(cf.FileSizeInBytes)
	}
	if r.DeletionVector != nil {
		d.removeDV(r.DeletionVector)
	}
}

func (d *Delta) addDV(dv *v4manifest.DeletionVector) {
	d.AddedDVs++
	d.AddedPositionDeletes += dv.Cardinality
	d.AddedFilesSize += dv.SizeInBytes
}

func (d *Delta) removeDV(dv *v4manifest.DeletionVector) {
	d.RemovedDVs++
	d.RemovedPositionDeletes += dv.Cardinality
	d.RemovedFilesSize += dv.SizeInBytes
}

func (d *Delta) addEqDeletes(r *v4manifest.TrackedFile) {
	d.AddedEqDeleteFiles++
	d.AddedEqualityDeletes += r.RecordCount
	d.AddedFilesSize += r.FileSizeInBytes
}

func (d *Delta) removeEqDeletes(r *v4manifest.TrackedFile) {
	d.RemovedEqDeleteFiles++
	d.RemovedEqualityDeletes += r.RecordCount
	d.RemovedFilesSize += r.FileSizeInBytes
}

func (d *Delta) addColumnFile(size int64)    { d.AddedFilesSize += size }
func (d *Delta) removeColumnFile(size int64) { d.RemovedFilesSize += size }

// Snapshot summary keys (the Iceberg spec's names). The totals are the
// table's live files after the commit.
const (
	SummaryTotalRecords         = "total-records"
	SummaryTotalDataFiles       = "total-data-files"
	SummaryTotalDeleteFiles     = "total-delete-files"
	SummaryTotalFilesSize       = "total-files-size"
	SummaryTotalPositionDeletes = "total-position-deletes"
	SummaryTotalEqualityDeletes = "total-equality-deletes"
)

// totalKeys are the totals a snapshot summary carries, in a fixed order.
var totalKeys = []string{SummaryTotalRecords, SummaryTotalDataFiles, SummaryTotalDeleteFiles, SummaryTotalFilesSize,
	SummaryTotalPositionDeletes, SummaryTotalEqualityDeletes}

// counters are the delta's summary counters.
func (d *Delta) counters() map[string]int64 {
	return map[string]int64{
		"added-data-files":              d.AddedDataFiles,
		"deleted-data-files":            d.DeletedDataFiles,
		"added-delete-files":            d.AddedEqDeleteFiles + d.AddedDVs,
		"removed-delete-files":          d.RemovedEqDeleteFiles + d.RemovedDVs,
		"added-equality-delete-files":   d.AddedEqDeleteFiles,
		"removed-equality-delete-files": d.RemovedEqDeleteFiles,
		"added-dvs":                     d.AddedDVs,
		"removed-dvs":                   d.RemovedDVs,
		"added-records":                 d.AddedRecords,
		"deleted-records":               d.DeletedRecords,
		"added-files-size":              d.AddedFilesSize,
		"removed-files-size":            d.RemovedFilesSize,
		"added-position-deletes":        d.AddedPositionDeletes,
		"removed-position-deletes":      d.RemovedPositionDeletes,
		"added-equality-deletes":        d.AddedEqualityDeletes,
		"removed-equality-deletes":      d.RemovedEqualityDeletes,
	}
}

// changes are the delta's effect on each total.
func (d *Delta) changes() map[string]int64 {
	return map[string]int64{
		SummaryTotalRecords:         d.AddedRecords - d.DeletedRecords,
		SummaryTotalDataFiles:       d.AddedDataFiles - d.DeletedDataFiles,
		SummaryTotalDeleteFiles:     d.AddedEqDeleteFiles + d.AddedDVs - d.RemovedEqDeleteFiles - d.RemovedDVs,
		SummaryTotalFilesSize:       d.AddedFilesSize - d.RemovedFilesSize,
		SummaryTotalPositionDeletes: d.AddedPositionDeletes - d.RemovedPositionDeletes,
		SummaryTotalEqualityDeletes: d.AddedEqualityDeletes - d.RemovedEqualityDeletes,
	}
}

// reservedKeys are the summary keys the server computes: the caller's
// snapshot-properties never set them.
func reservedKeys(own iceberg.Properties) map[string]bool {
	keys := map[string]bool{"operation": true}
	for k := range (&Delta{}).counters() {
		keys[k] = true
	}
	for _, k := range totalKeys {
		keys[k] = true
	}
	for k := range own {
		keys[k] = true
	}
	return keys
}

// summarize is a commit's snapshot summary: the caller's properties
// (without the keys the server computes: operation, counters, totals and
// the commit kind's own keys), then d's counters that are not zero (as
// Iceberg's writers do: every snapshot's summary is in every later
// metadata file), then own. Totals are
// added by AddTotals, which needs the parent snapshot.
func summarize(props map[string]string, d *Delta, own iceberg.Properties) iceberg.Properties {
	reserved := reservedKeys(own)
	out := iceberg.Properties{}
	for k, v := range props {
		if !reserved[k] {
			out[k] = v
		}
	}
	for k, v := range d.counters() {
		if v != 0 {
			out[k] = strconv.FormatInt(v, 10)
		}
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}

// ParentTotals reads the totals of a parent snapshot's summary; ok is
// false when one is missing or not a number (a snapshot written before v4
// summaries carried them, or by a writer that left them out).
func ParentTotals(parent iceberg.Properties) (map[string]int64, bool) {
	out := make(map[string]int64, len(totalKeys))
	for _, k := range totalKeys {
		v, err := strconv.ParseInt(parent[k], 10, 64)
		if err != nil {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

// AddTotals sets res's totals: base (the parent snapshot's totals; empty
// for a table's first snapshot) plus res.Delta. Totals the tree rewrite
// set itself (a conversion knows its totals) are kept. A total that would
// go negative means base did not describe the parent (a bug or a parent
// summary written by someone else); the totals are then left out rather
// than made up, and AddTotals reports false.
func (r *Result) AddTotals(base map[string]int64) bool {
	if r.Summary == nil {
		r.Summary = iceberg.Properties{}
	}
	ch := r.Delta.changes()
	vals := make(map[string]int64, len(totalKeys))
	for _, k := range totalKeys {
		if _, set := r.Summary[k]; set {
			continue
		}
		if vals[k] = base[k] + ch[k]; vals[k] < 0 {
			return false
		}
	}
	for k, v := range vals {
		r.Summary[k] = strconv.FormatInt(v, 10)
	}
	return true
}

// Totals are the totals of the live files of a tree's data rows and
// equality-delete rows (rows that are not live are skipped): for a parent
// snapshot whose summary has none.
func Totals(rows []v4manifest.TrackedFile) map[string]int64 {
	var d Delta
	for i := range rows {
		r := &rows[i]
		if !r.Tracking.Status.Live() {
			continue
		}
		switch r.ContentType {
		case v4manifest.ContentData:
			d.addData(r)
		case v4manifest.ContentEqualityDeletes:
			d.addEqDeletes(r)
		}
	}
	return d.changes()
}
