package service

import (
	"errors"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/validation"
)

// checkNewMetadata is the guard before a table's metadata pointer moves: it
// refuses a commit whose resulting metadata would brick the table. prev is
// the current metadata (nil when the commit creates the table), next the
// metadata the commit built and data its serialized form, exactly the bytes
// about to be stored. It returns a 400 ValidationException with a reason
// code when next breaks a rule of validation.TableMetadata, when data does
// not parse back the way the loader parses stored metadata, or when what
// parses back breaks a rule (so what is checked is what will be loaded).
func (s *Service) checkNewMetadata(prev table.Metadata, next table.Metadata, data []byte) error {
	now := time.Now()
	rules := validation.MetadataRules{MaxClockSkew: s.opts.MaxClockSkew}
	if err := validation.TableMetadata(prev, next, now, rules); err != nil {
		return metadataRejected(err)
	}
	back, _, err := parseTableMetadata(data)
	if err != nil {
		e := wrapErr(KindValidation, err, "Commit rejected: the new table metadata would not load back: %v", err)
		e.Reason = validation.ReasonMetadataDoesNotLoad
		return e
	}
	if err := validation.TableMetadata(prev, back, now, rules); err != nil {
		return metadataRejected(err)
	}
	return nil
}

// metadataRejected turns a validation rejection into a 400
// ValidationException carrying its reason code and details.
func metadataRejected(err error) error {
	var ve *validation.Error
	if !errors.As(err, &ve) {
		return wrapErr(KindValidation, err, "Commit rejected: %v", err)
	}
	e := wrapErr(KindValidation, err, "Commit rejected: %s", ve.Message)
	e.Reason, e.Details = ve.Reason, ve.Details
	return e
}
