package validation

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// FuzzTableMetadata builds commits from fuzz bytes with iceberg-go's
// builder, as the catalog does, and checks the promise of TableMetadata:
// metadata it accepts loads back, and the table then takes another commit
// (no accepted commit bricks a table). The first byte picks the table (v2,
// legacy v1, legacy v2); then every 4 bytes are one update.
func FuzzTableMetadata(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 0, 140, 0x05, 0, 1, 12, 0, 0},                             // append 12 on main
		{0, 0, 140, 0x04, 0, 0, 77, 0x04, 0},                          // two parentless snapshots, sequence numbers decreasing
		{0, 0, 140, 0x05, 100, 1, 12, 0, 0},                           // append dated hours ahead
		{0, 2, 0xfd, 3, 4, 3, 1, 0, 0},                                // schema with field id -3
		{1, 0, 103, 0x01, 0, 6, 0, 0, 0, 0, 136, 0x05, 0, 1, 8, 0, 0}, // legacy v1: append, upgrade, append
		{2, 0, 150, 0x05, 0, 1, 22, 0, 0, 4, 20, 0, 0},                // legacy v2: append, expire
		{0, 6, 1, 0, 0, 0, 140, 0x15, 0, 1, 12, 0, 0},                 // upgrade to v3, append with row lineage
		{0, 7, 2, 0, 0, 8, 1, 1, 0},                                   // partition spec and sort order
	} {
		f.Add(seed)
	}
	fixtures := []string{v2Fixture, legacyV1Fixture, legacyV2Fixture}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 || len(ops) > 64 {
			return
		}
		now := time.Now()
		prev := fixture(t, fixtures[int(ops[0])%len(fixtures)])
		b, err := table.MetadataBuilderFromBase(prev, prev.Location()+"/metadata/00001.metadata.json")
		require.NoError(t, err)
		for ops = ops[1:]; len(ops) >= 4; ops = ops[4:] {
			if fuzzUpdate(b, now, ops[0], ops[1], ops[2], ops[3]) != nil {
				return // the builder refused the commit: nothing is stored
			}
		}
		next, err := b.Build()
		if err != nil {
			return
		}
		if err := TableMetadata(prev, next, now, MetadataRules{}); err != nil {
			var ve *Error
			require.ErrorAs(t, err, &ve)
			require.NotEmpty(t, ve.Reason)
			return
		}
		back := reload(t, next)
		// A later commit with the same clock still builds and loads.
		b2, err := table.MetadataBuilderFromBase(back, back.Location()+"/metadata/00002.metadata.json")
		require.NoError(t, err)
		require.NoError(t, b2.SetProperties(iceberg.Properties{"later": "commit"}))
		later, err := b2.Build()
		require.NoError(t, err, "a commit after an accepted one fails")
		reload(t, later)
	})
}

func reload(t *testing.T, m table.Metadata) table.Metadata {
	t.Helper()
	data, err := json.Marshal(m)
	require.NoError(t, err)
	back, err := table.ParseMetadataBytes(data)
	require.NoError(t, err, "accepted metadata does not load back: %s", data)
	return back
}

// fuzzUpdate applies one update chosen by op with arguments from a, x, y.
func fuzzUpdate(b *table.MetadataBuilder, now time.Time, op, a, x, y byte) error {
	id := int64(a & 0x1f)
	if id == 0x1f {
		id = -5
	}
	switch op % 9 {
	case 0:
		// x: parent (bits 0-1), schema id (bits 2-3), row lineage (bit 4);
		// a's top bits: sequence number step; y: minutes from now.
		s := &table.Snapshot{
			SnapshotID: id, ManifestList: "file:///t/m.avro", Summary: &table.Summary{Operation: table.OpAppend},
			TimestampMs: now.Add(time.Duration(int8(y)) * 97 * time.Second).UnixMilli(),
		}
		if before, err := b.SnapshotByID(id - 1); err == nil {
			s.SequenceNumber = before.SequenceNumber
		}
		s.SequenceNumber += int64(a>>5) - 3
		switch x % 4 {
		case 1:
			p := id - 1
			s.ParentSnapshotID = &p
		case 2:
			p := int64(y) + 1000
			s.ParentSnapshotID = &p
		case 3:
			s.ParentSnapshotID = &s.SnapshotID
		}
		if sid := []int{-1, 0, 77, -1}[(x>>2)%4]; sid >= 0 {
			s.SchemaID = &sid
		}
		if x&0x10 != 0 {
			first, rows := b.NextRowID(), int64(y)
			s.FirstRowID, s.AddedRows = &first, &rows
		}
		return b.AddSnapshot(s)
	case 1:
		name := table.MainBranch
		if x%2 == 1 {
			name = "b" + strconv.Itoa(int(y%2))
		}
		return b.SetSnapshotRef(name, id, table.BranchRef)
	case 2:
		fields := []iceberg.NestedField{
			{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			{ID: int(int8(a)), Name: "a", Type: iceberg.PrimitiveTypes.Int32},
			{ID: int(x) + 2, Name: "l", Type: &iceberg.ListType{ElementID: int(int8(y)), Element: iceberg.PrimitiveTypes.Int32}},
		}
		if y == 0xff {
			fields[1].ID = 2147483600
		}
		s, err := safeSchema(fields)
		if err != nil {
			return err
		}
		return b.AddSchema(s)
	case 3:
		return b.SetCurrentSchemaID(int(a%3) - 1)
	case 4:
		return b.RemoveSnapshots([]int64{id}, false)
	case 5:
		return b.RemoveSchemas([]int{int(a % 3)})
	case 6:
		return b.SetFormatVersion(2 + int(a%2))
	case 7:
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{int(a % 4)}, FieldID: int(int8(x)) + 1000, Name: "p" + strconv.Itoa(int(x)), Transform: iceberg.BucketTransform{NumBuckets: 4}})
		return b.AddPartitionSpec(&spec, false)
	default:
		o, err := table.NewSortOrder(int(x%4), []table.SortField{{SourceIDs: []int{int(a % 4)}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
		if err != nil {
			return err
		}
		return b.AddSortOrder(&o)
	}
}

// safeSchema builds a schema, turning iceberg-go's panic on repeated field
// ids into an error (a client cannot send such a schema: decoding refuses it).
func safeSchema(fields []iceberg.NestedField) (s *iceberg.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errRepeated
		}
	}()
	return iceberg.NewSchema(1, fields...), nil
}

var errRepeated = &Error{Reason: "repeated-field-id", Message: "repeated field id"}
