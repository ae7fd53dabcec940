package tablemeta

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/iceberg-go/table"
)

// SameEncoded compares what a check document read back as (back) with
// what it was written from: next, whose shell (everything but the snapshot
// list and log) encoded as enc.Shell. back's shell must encode the same
// but for the metadata log, which must be the entries the check document
// holds (the new ones); its snapshot log must be next's, and each snapshot
// it holds must equal next's.
func SameEncoded(next, back table.Metadata, enc *Encoded) error {
	if back.Version() != next.Version() {
		return errors.New("metadata reads back as another format")
	}
	shell, err := encodeShell(back, enc.Version)
	if err == nil {
		shell, err = withoutKeys(shell, "metadata-log")
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(shell, enc.checkShell) {
		return errors.New("metadata does not read back as written")
	}
	if !slices.Equal(enc.newLog, slices.Collect(back.PreviousFiles())) {
		return errors.New("metadata log does not read back as written")
	}
	if !slices.Equal(slices.Collect(next.SnapshotLogs()), slices.Collect(back.SnapshotLogs())) {
		return errors.New("snapshot log does not read back as written")
	}
	for _, sb := range back.Snapshots() {
		sn := next.SnapshotByID(sb.SnapshotID)
		if sn == nil || !reflect.DeepEqual(*sn, sb) {
			return fmt.Errorf("snapshot %d does not read back as written", sb.SnapshotID)
		}
	}
	return nil
}
