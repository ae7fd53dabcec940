package tableaccess

import (
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
)

// Encoded is a commit's new metadata document, its refs-only form, its
// cache entry (nil when it was encoded the slow way) and the check it must
// pass before it may be committed.
type Encoded struct {
	Data, Refs []byte
	Entry      *tablemeta.Entry
	Check      func() error
}

// Encode serialises meta, built from prev's metadata, as format
// target: through the fast path when the format stays the same, else by
// encoding everything (and then checking by reading everything back). It
// is here, below both, because table commits and v4 commits encode alike.
// It fails only when the metadata cannot be encoded (500); the check's
// rejections are 400 ValidationExceptions. The result's Check is
// CheckNewMetadata, or its cheaper form for the fast path.
func (a *Access) Encode(prev *tablemeta.Entry, meta table.Metadata, target int) (*Encoded, error) {
	if target == prev.Version && meta.Version() == prev.Meta.Version() {
		enc, ok, err := tablemeta.Encode(meta, target, prev)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "encode metadata")
		}
		if ok {
			return &Encoded{
				Data: enc.Data, Refs: enc.Refs,
				Entry: &tablemeta.Entry{Meta: meta, Version: target, Data: enc.Data, Spans: enc.Spans, NSnaps: len(enc.Spans)},
				Check: func() error { return a.checkEncoded(prev.Meta, meta, enc) },
			}, nil
		}
	}
	data, err := tablemeta.Marshal(meta, target)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode metadata")
	}
	return &Encoded{
		Data: data, Refs: tablemeta.RefsDocument(meta, data),
		Check: func() error { return a.CheckNewMetadata(prev.Meta, meta, data) },
	}, nil
}
