package validation

import (
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Reason codes of rejected table metadata (a commit whose result must not
// be stored). Field ids named by an identifier, partition or sort field that
// no schema has use ReasonUnknownFieldID.
const (
	ReasonUnknownSchemaID         = "unknown-schema-id"
	ReasonUnknownPartitionSpecID  = "unknown-partition-spec-id"
	ReasonUnknownSortOrderID      = "unknown-sort-order-id"
	ReasonUnknownRefSnapshot      = "unknown-ref-snapshot"
	ReasonUnknownParentSnapshot   = "unknown-parent-snapshot"
	ReasonInvalidSnapshotID       = "invalid-snapshot-id"
	ReasonSequenceNotIncreasing   = "snapshot-sequence-not-increasing"
	ReasonInvalidSequenceNumber   = "invalid-sequence-number"
	ReasonTimestampInFuture       = "timestamp-in-future"
	ReasonInvalidTimestamp        = "invalid-timestamp"
	ReasonInvalidFieldID          = "invalid-field-id"
	ReasonInvalidPartitionFieldID = "invalid-partition-field-id"
	ReasonSnapshotLogOrder        = "snapshot-log-out-of-order"
	ReasonMetadataLogOrder        = "metadata-log-out-of-order"
	ReasonRowLineageRegressed     = "row-lineage-regressed"
	ReasonRowIDOutOfRange         = "row-id-out-of-range"
	ReasonMissingMetadata         = "missing-metadata"
	ReasonTableUUIDChanged        = "table-uuid-changed"
	ReasonMainNotBranch           = "main-not-a-branch"
	// ReasonMetadataDoesNotLoad is for callers that re-parse the serialized
	// metadata and find that it does not load back.
	ReasonMetadataDoesNotLoad = "metadata-does-not-load"
)

// DefaultMaxClockSkew is how far past the server clock a new snapshot may
// be dated. It equals the one minute by which Iceberg readers let logs run
// backwards: a snapshot dated further ahead would make every later commit
// with a correct clock look out of order until the clock caught up.
const DefaultMaxClockSkew = time.Minute

// logTolerance is the backward step Iceberg readers accept between
// consecutive log entries (and between the last entry and last-updated-ms).
const logTolerance = int64(60_000)

// maxCounter bounds sequence numbers and next-row-id. Writers advance them
// from the table's current values; one that jumps near the end of the int64
// range would leave no room for the next append (a bricked table).
const maxCounter = int64(1) << 62

// maxDataFieldID is the highest field id a table column may use; ids above
// are reserved for metadata columns.
const maxDataFieldID = 2147483447

// MetadataRules configure TableMetadata.
type MetadataRules struct {
	// MaxClockSkew is how far into the future (relative to now) a new
	// snapshot or last-updated-ms may be; <= 0 means DefaultMaxClockSkew.
	MaxClockSkew time.Duration
}

// TableMetadata checks the metadata a commit would store. prev is the
// table's current metadata, nil when the commit creates the table. It
// returns an *Error when next would not load back, or breaks a rule of the
// Iceberg spec that later commits rely on:
//
//   - current schema, default spec and default sort order ids name existing
//     entries, refs and the current snapshot name existing snapshots, and the
//     main ref is the current snapshot;
//   - every snapshot added by this commit has a non-negative id, an existing
//     (or earlier added) parent, an existing schema id, a timestamp between
//     the epoch and now plus the allowed skew, row ids within range, and (v2+) a sequence number greater
//     than its parent's and than the last sequence number before it (v1: 0);
//   - last-sequence-number covers every snapshot and never decreases, and
//     next-row-id never decreases (v3+); neither may jump beyond 2^62, which
//     would leave later appends no numbers;
//   - a schema added by this commit uses positive field ids within
//     last-column-id (iceberg-go's schema type already refuses repeats) and
//     has its identifier fields; a partition spec added uses positive,
//     distinct field ids within last-partition-id; added specs and sort
//     orders name existing source fields;
//   - snapshot and metadata logs are in time order, and a changed
//     last-updated-ms is not in the future.
//
// Snapshots, schemas and specs that prev already had are held only to the
// rules every loadable table meets, so tables written by older engines
// (missing parents, snapshots without schema ids, odd field ids) still take
// commits.
func TableMetadata(prev, next table.Metadata, now time.Time, rules MetadataRules) error {
	if next == nil {
		return reject(ReasonMissingMetadata, nil, "No table metadata to check")
	}
	skew := rules.MaxClockSkew
	if skew <= 0 {
		skew = DefaultMaxClockSkew
	}
	c := &metaCheck{prev: prev, next: next, latest: now.Add(skew).UnixMilli(), skew: skew}
	c.index()
	for _, step := range []func() error{c.pointers, c.snapshots, c.sequence, c.schemas, c.specs, c.sortOrders, c.logs} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// metaCheck holds one TableMetadata run and the id sets it looks things up in.
type metaCheck struct {
	prev, next table.Metadata
	latest     int64 // newest timestamp (ms) accepted for new entries
	addedMax   int64 // highest sequence number among the snapshots added so far
	skew       time.Duration

	prevSnaps   map[int64]bool
	prevSchemas map[int]bool
	prevSpecs   map[int]bool
	prevOrders  map[int]bool
	nextSchemas map[int]bool
	nextFields  map[int]bool // field ids of any schema of next
	snaps       []table.Snapshot
}

func (c *metaCheck) index() {
	c.prevSnaps, c.prevSchemas, c.prevSpecs, c.prevOrders = nil, map[int]bool{}, map[int]bool{}, map[int]bool{}
	if c.prev != nil {
		// Sized up front: a long history would otherwise rehash its way up
		// on every commit.
		snaps := c.prev.Snapshots()
		c.prevSnaps = make(map[int64]bool, len(snaps))
		for _, s := range snaps {
			c.prevSnaps[s.SnapshotID] = true
		}
		for _, s := range c.prev.Schemas() {
			c.prevSchemas[s.ID] = true
		}
		for _, s := range c.prev.PartitionSpecs() {
			c.prevSpecs[s.ID()] = true
		}
		for _, o := range c.prev.SortOrders() {
			c.prevOrders[o.OrderID()] = true
		}
	}
	c.nextSchemas = map[int]bool{}
	for _, s := range c.next.Schemas() {
		c.nextSchemas[s.ID] = true
	}
	c.snaps = c.next.Snapshots()
}

// currentSchemaID returns the id of next's current schema; ok is false when
// the current schema id names no schema (iceberg-go panics on that).
func currentSchemaID(m table.Metadata) (id int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	s := m.CurrentSchema()
	if s == nil {
		return 0, false
	}
	return s.ID, true
}

// pointers checks the ids that name the current schema, spec, sort order and
// snapshots.
func (c *metaCheck) pointers() error {
	if c.prev != nil && c.prev.TableUUID() != uuid.Nil && c.next.TableUUID() != c.prev.TableUUID() {
		return reject(ReasonTableUUIDChanged, nil, "Cannot reassign uuid: a table keeps the uuid it was created with")
	}
	if id, ok := currentSchemaID(c.next); !ok || !c.nextSchemas[id] {
		return reject(ReasonUnknownSchemaID, nil, "The current schema id names no schema of the table")
	}
	if id := c.next.DefaultPartitionSpec(); c.next.PartitionSpecByID(id) == nil {
		return reject(ReasonUnknownPartitionSpecID, map[string]any{"spec-id": id}, "Default partition spec %d does not exist", id)
	}
	if id := c.next.DefaultSortOrder(); id != table.UnsortedSortOrderID {
		found := false
		for _, o := range c.next.SortOrders() {
			found = found || o.OrderID() == id
		}
		if !found {
			return reject(ReasonUnknownSortOrderID, map[string]any{"order-id": id}, "Default sort order %d does not exist", id)
		}
	}
	var main *table.SnapshotRef
	for name, ref := range c.next.Refs() {
		if c.next.SnapshotByID(ref.SnapshotID) == nil {
			return reject(ReasonUnknownRefSnapshot, map[string]any{"ref": name, "snapshot-id": ref.SnapshotID},
				"Ref %s points at snapshot %d, which does not exist", name, ref.SnapshotID)
		}
		if name == table.MainBranch {
			if ref.SnapshotRefType != table.BranchRef {
				return reject(ReasonMainNotBranch, nil, "Ref main must be a branch, not a %s", ref.SnapshotRefType)
			}
			main = &ref
		}
	}
	cur := c.next.CurrentSnapshot()
	if main != nil && (cur == nil || cur.SnapshotID != main.SnapshotID) {
		return reject(ReasonUnknownRefSnapshot, map[string]any{"ref": table.MainBranch, "snapshot-id": main.SnapshotID},
			"Branch main points at snapshot %d but the current snapshot differs", main.SnapshotID)
	}
	return nil
}

// snapshots checks each snapshot this commit adds, in the order added.
func (c *metaCheck) snapshots() error {
	seen := make(map[int64]*table.Snapshot, len(c.snaps))
	lastSeq := int64(0)
	if c.prev != nil && c.prev.Version() >= 2 {
		lastSeq = c.prev.LastSequenceNumber()
	}
	for i := range c.snaps {
		s := &c.snaps[i]
		if seen[s.SnapshotID] != nil {
			return reject(ReasonInvalidSnapshotID, map[string]any{"snapshot-id": s.SnapshotID}, "Snapshot id %d appears twice", s.SnapshotID)
		}
		seen[s.SnapshotID] = s
		if c.prevSnaps[s.SnapshotID] {
			// A kept snapshot may predate these rules; only a schema it
			// could name before must survive the commit.
			if id := s.SchemaID; id != nil && c.prevSchemas[*id] && !c.nextSchemas[*id] {
				return reject(ReasonUnknownSchemaID, map[string]any{"snapshot-id": s.SnapshotID, "schema-id": *id},
					"Snapshot %d uses schema %d, which this commit removes", s.SnapshotID, *id)
			}
			continue
		}
		if err := c.newSnapshot(s, seen, &lastSeq); err != nil {
			return err
		}
	}
	return nil
}

// newSnapshot checks one added snapshot; lastSeq is the table's last
// sequence number before it and advances past it.
func (c *metaCheck) newSnapshot(s *table.Snapshot, seen map[int64]*table.Snapshot, lastSeq *int64) error {
	d := map[string]any{"snapshot-id": s.SnapshotID}
	switch {
	case s.SnapshotID < 0:
		return reject(ReasonInvalidSnapshotID, d, "Snapshot id %d is negative", s.SnapshotID)
	case s.TimestampMs < 0:
		d["timestamp-ms"] = s.TimestampMs
		return reject(ReasonInvalidTimestamp, d, "Snapshot %d has a negative timestamp-ms %d", s.SnapshotID, s.TimestampMs)
	case s.TimestampMs > c.latest:
		d["timestamp-ms"] = s.TimestampMs
		return reject(ReasonTimestampInFuture, d, "Snapshot %d is dated %s, more than %s ahead of the catalog clock",
			s.SnapshotID, time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339), c.skew)
	case s.SchemaID != nil && !c.nextSchemas[*s.SchemaID]:
		d["schema-id"] = *s.SchemaID
		return reject(ReasonUnknownSchemaID, d, "Snapshot %d uses schema %d, which does not exist", s.SnapshotID, *s.SchemaID)
	}
	if f, n := s.FirstRowID, s.AddedRows; f != nil && (*f > maxCounter || (n != nil && *n > maxCounter-*f)) {
		d["first-row-id"] = *f
		return reject(ReasonRowIDOutOfRange, d, "Snapshot %d assigns row ids beyond %d", s.SnapshotID, maxCounter)
	}
	var parent *table.Snapshot
	if p := s.ParentSnapshotID; p != nil {
		d["parent-snapshot-id"] = *p
		// The parent must exist before this snapshot: kept from prev (even
		// if this commit expires it) or added earlier in this commit.
		parent = seen[*p]
		if parent == nil && c.prev != nil {
			parent = c.prev.SnapshotByID(*p)
		}
		if parent == nil || *p == s.SnapshotID {
			return reject(ReasonUnknownParentSnapshot, d, "Snapshot %d names parent %d, which does not exist", s.SnapshotID, *p)
		}
	}
	if c.next.Version() < 2 || (s.SequenceNumber == 0 && c.prev != nil && c.prev.Version() < 2) {
		// A v1 snapshot, or one added before an upgrade in the same commit.
		if s.SequenceNumber != 0 {
			d["sequence-number"] = s.SequenceNumber
			return reject(ReasonInvalidSequenceNumber, d, "Snapshot %d has sequence number %d; format version 1 snapshots have none (0)", s.SnapshotID, s.SequenceNumber)
		}
		return nil
	}
	d["sequence-number"] = s.SequenceNumber
	if s.SequenceNumber > maxCounter {
		return reject(ReasonInvalidSequenceNumber, d, "Snapshot %d has sequence number %d, beyond %d: later snapshots would have no sequence numbers left",
			s.SnapshotID, s.SequenceNumber, maxCounter)
	}
	if parent != nil && s.SequenceNumber <= parent.SequenceNumber {
		return reject(ReasonSequenceNotIncreasing, d, "Snapshot %d has sequence number %d, not above its parent %d's %d",
			s.SnapshotID, s.SequenceNumber, parent.SnapshotID, parent.SequenceNumber)
	}
	// As in the Java reference: a snapshot with a parent must come after
	// the table's last sequence number; a parentless one (a replace
	// transaction that lost a race to another replace) may reuse it. Within
	// one commit added snapshots still increase.
	if s.SequenceNumber <= c.addedMax || (parent != nil && s.SequenceNumber <= *lastSeq) {
		last := max(*lastSeq, c.addedMax)
		d["last-sequence-number"] = last
		return reject(ReasonSequenceNotIncreasing, d, "Snapshot %d has sequence number %d, not above the table's last sequence number %d",
			s.SnapshotID, s.SequenceNumber, last)
	}
	c.addedMax = s.SequenceNumber
	*lastSeq = max(*lastSeq, s.SequenceNumber)
	return nil
}

// sequence checks the table-wide counters: last-sequence-number covers every
// snapshot and neither it nor next-row-id goes backwards.
func (c *metaCheck) sequence() error {
	if c.next.Version() < 2 {
		return nil
	}
	last := c.next.LastSequenceNumber()
	for _, s := range c.snaps {
		if s.SequenceNumber > last {
			return reject(ReasonSequenceNotIncreasing, map[string]any{"snapshot-id": s.SnapshotID, "sequence-number": s.SequenceNumber, "last-sequence-number": last},
				"Snapshot %d has sequence number %d, above the table's last sequence number %d", s.SnapshotID, s.SequenceNumber, last)
		}
	}
	if c.next.Version() >= 3 && c.next.NextRowID() > maxCounter && (c.prev == nil || c.next.NextRowID() != c.prev.NextRowID()) {
		return reject(ReasonRowIDOutOfRange, map[string]any{"next-row-id": c.next.NextRowID()},
			"next-row-id would become %d, beyond %d: later appends would have no row ids left", c.next.NextRowID(), maxCounter)
	}
	if c.prev == nil {
		return nil
	}
	if c.prev.Version() >= 2 && last < c.prev.LastSequenceNumber() {
		return reject(ReasonSequenceNotIncreasing, map[string]any{"last-sequence-number": last},
			"Last sequence number would go back from %d to %d", c.prev.LastSequenceNumber(), last)
	}
	if c.prev.Version() >= 3 && c.next.Version() >= 3 && c.next.NextRowID() < c.prev.NextRowID() {
		return reject(ReasonRowLineageRegressed, map[string]any{"next-row-id": c.next.NextRowID()},
			"next-row-id would go back from %d to %d", c.prev.NextRowID(), c.next.NextRowID())
	}
	return nil
}

// walkFields calls fn with the id of f and of every field nested in it
// (struct fields, list elements, map keys and values).
func walkFields(f iceberg.NestedField, fn func(int)) {
	fn(f.ID)
	walkType(f.Type, fn)
}

func walkType(t iceberg.Type, fn func(int)) {
	switch t := t.(type) {
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			walkFields(f, fn)
		}
	case *iceberg.ListType:
		fn(t.ElementID)
		walkType(t.Element, fn)
	case *iceberg.MapType:
		fn(t.KeyID)
		walkType(t.KeyType, fn)
		fn(t.ValueID)
		walkType(t.ValueType, fn)
	}
}

// schemas checks the schemas this commit adds, and that last-column-id
// never goes backwards (field ids must never be reused).
func (c *metaCheck) schemas() error {
	lastCol := c.next.LastColumnID()
	if c.prev != nil && lastCol < c.prev.LastColumnID() {
		return reject(ReasonInvalidFieldID, map[string]any{"last-column-id": lastCol},
			"last-column-id would go back from %d to %d", c.prev.LastColumnID(), lastCol)
	}
	for _, s := range c.next.Schemas() {
		if c.prevSchemas[s.ID] {
			continue
		}
		ids := map[int]bool{}
		var bad error
		for _, f := range s.Fields() {
			walkFields(f, func(id int) {
				d := map[string]any{"schema-id": s.ID, "field-id": id}
				switch {
				case bad != nil:
				case id <= 0:
					bad = reject(ReasonInvalidFieldID, d, "Schema %d has field id %d; field ids must be positive", s.ID, id)
				case id > maxDataFieldID:
					bad = reject(ReasonInvalidFieldID, d, "Schema %d has field id %d, in the range reserved for metadata columns", s.ID, id)
				case id > lastCol:
					bad = reject(ReasonInvalidFieldID, d, "Schema %d has field id %d, above last-column-id %d", s.ID, id, lastCol)
				}
				ids[id] = true
			})
		}
		if bad != nil {
			return bad
		}
		for _, id := range s.IdentifierFieldIDs {
			if !ids[id] {
				return reject(ReasonUnknownFieldID, map[string]any{"schema-id": s.ID, "field-id": id},
					"Schema %d names identifier field %d, which it does not have", s.ID, id)
			}
		}
	}
	return nil
}

// specs checks the partition specs this commit adds: positive field ids,
// unique in the spec, within last-partition-id, over existing columns.
func (c *metaCheck) specs() error {
	lastPart := c.next.LastPartitionSpecID()
	for _, spec := range c.next.PartitionSpecs() {
		if c.prevSpecs[spec.ID()] {
			continue
		}
		ids := map[int]bool{}
		for _, f := range spec.Fields() {
			d := map[string]any{"spec-id": spec.ID(), "partition-field-id": f.FieldID}
			switch {
			case f.FieldID <= 0:
				return reject(ReasonInvalidPartitionFieldID, d, "Partition spec %d has field id %d; partition field ids must be positive", spec.ID(), f.FieldID)
			case ids[f.FieldID]:
				return reject(ReasonInvalidPartitionFieldID, d, "Partition spec %d uses field id %d twice", spec.ID(), f.FieldID)
			case lastPart != nil && f.FieldID > *lastPart:
				return reject(ReasonInvalidPartitionFieldID, d, "Partition spec %d has field id %d, above last-partition-id %d", spec.ID(), f.FieldID, *lastPart)
			}
			ids[f.FieldID] = true
			if err := c.sources(f.SourceIDs, "Partition field "+f.Name, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortOrders checks that sort orders this commit adds sort existing columns.
func (c *metaCheck) sortOrders() error {
	for _, o := range c.next.SortOrders() {
		if c.prevOrders[o.OrderID()] {
			continue
		}
		for _, f := range o.Fields() {
			d := map[string]any{"order-id": o.OrderID()}
			if err := c.sources(f.SourceIDs, fmt.Sprintf("Sort order %d", o.OrderID()), d); err != nil {
				return err
			}
		}
	}
	return nil
}

// sources checks that ids are field ids of some schema of next.
func (c *metaCheck) sources(ids []int, what string, d map[string]any) error {
	if c.nextFields == nil {
		// Built on first use: only new specs and sort orders need it.
		c.nextFields = map[int]bool{}
		for _, s := range c.next.Schemas() {
			for _, f := range s.Fields() {
				walkFields(f, func(id int) { c.nextFields[id] = true })
			}
		}
	}
	for _, id := range ids {
		if !c.nextFields[id] {
			d["field-id"] = id
			return reject(ReasonUnknownFieldID, d, "%s has source field %d, which no schema has", what, id)
		}
	}
	return nil
}

// logs checks that the snapshot and metadata logs run forward in time (with
// the tolerance Iceberg readers allow) up to last-updated-ms, and that a
// changed last-updated-ms is not in the future.
func (c *metaCheck) logs() error {
	updated := c.next.LastUpdatedMillis()
	if updated > c.latest && (c.prev == nil || updated != c.prev.LastUpdatedMillis()) {
		return reject(ReasonTimestampInFuture, map[string]any{"last-updated-ms": updated},
			"last-updated-ms %d is more than %s ahead of the catalog clock", updated, c.skew)
	}
	prevTS := int64(-1 << 62)
	for e := range c.next.SnapshotLogs() {
		if e.TimestampMs < prevTS-logTolerance {
			return reject(ReasonSnapshotLogOrder, map[string]any{"snapshot-id": e.SnapshotID, "timestamp-ms": e.TimestampMs},
				"Snapshot log entry for %d at %d is earlier than the entry before it (%d)", e.SnapshotID, e.TimestampMs, prevTS)
		}
		prevTS = e.TimestampMs
	}
	if updated < prevTS-logTolerance {
		return reject(ReasonSnapshotLogOrder, map[string]any{"last-updated-ms": updated},
			"last-updated-ms %d is before the last snapshot log entry (%d)", updated, prevTS)
	}
	prevTS = int64(-1 << 62)
	for e := range c.next.PreviousFiles() {
		if e.TimestampMs < prevTS-logTolerance {
			return reject(ReasonMetadataLogOrder, map[string]any{"timestamp-ms": e.TimestampMs},
				"Metadata log entry at %d is earlier than the entry before it (%d)", e.TimestampMs, prevTS)
		}
		prevTS = e.TimestampMs
	}
	if updated < prevTS-logTolerance {
		return reject(ReasonMetadataLogOrder, map[string]any{"last-updated-ms": updated},
			"last-updated-ms %d is before the last metadata log entry (%d)", updated, prevTS)
	}
	return nil
}
