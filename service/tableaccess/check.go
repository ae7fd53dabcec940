package tableaccess

import (
	"errors"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/validation"
)

// CheckNewMetadata is the guard before a table's metadata pointer moves: it
// refuses a commit whose resulting metadata would brick the table. prev is
// the current metadata (nil when the commit creates the table), next the
// metadata the commit built and data its serialized form, exactly the bytes
// about to be stored. It returns a 400 ValidationException with a reason
// code when next breaks a rule of validation.TableMetadata, when data does
// not parse back the way the loader parses stored metadata, or when what
// parses back breaks a rule (so what is checked is what will be loaded).
func (a *Access) CheckNewMetadata(prev table.Metadata, next table.Metadata, data []byte) error {
	now := a.Now()
	rules := validation.MetadataRules{MaxClockSkew: a.opts.MaxClockSkew}
	if err := validation.TableMetadata(prev, next, now, rules); err != nil {
		return metadataRejected(err)
	}
	back, _, err := tablemeta.Parse(data)
	if err != nil {
		return doesNotLoad(err)
	}
	if err := validation.TableMetadata(prev, back, now, rules); err != nil {
		return metadataRejected(err)
	}
	return nil
}

// checkEncoded is CheckNewMetadata for a document written by tablemeta.Encode,
// without reading the whole document back: next is validated, then
// enc.check (the document minus the snapshots copied unchanged from the
// previous one, which parsed already) is read back and must hold what next
// holds. Copied snapshots are the previous document's bytes, which the
// loader already read into the very snapshots next carries. Same errors as
// CheckNewMetadata.
func (a *Access) checkEncoded(prev, next table.Metadata, enc *tablemeta.Encoded) error {
	rules := validation.MetadataRules{MaxClockSkew: a.opts.MaxClockSkew}
	if err := validation.TableMetadata(prev, next, a.Now(), rules); err != nil {
		return metadataRejected(err)
	}
	back, _, err := tablemeta.Parse(enc.Check)
	if err != nil {
		return doesNotLoad(err)
	}
	if err := tablemeta.SameEncoded(next, back, enc); err != nil {
		return doesNotLoad(err)
	}
	return nil
}

// doesNotLoad is the 400 for metadata that would not load back.
func doesNotLoad(err error) error {
	e := fault.Wrap(fault.Validation, err, "Commit rejected: the new table metadata would not load back: %v", err)
	e.Reason = validation.ReasonMetadataDoesNotLoad
	return e
}

// metadataRejected turns a validation rejection into a 400
// ValidationException carrying its reason code and details.
func metadataRejected(err error) error {
	var ve *validation.Error
	if !errors.As(err, &ve) {
		return fault.Wrap(fault.Validation, err, "Commit rejected: %v", err)
	}
	e := fault.Wrap(fault.Validation, err, "Commit rejected: %s", ve.Message)
	e.Reason, e.Details = ve.Reason, ve.Details
	return e
}
