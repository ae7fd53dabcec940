package service

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/v4commits"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/store"
)

// TableChange is one table's requirements and updates, as sent in
// CommitTableRequest (the identifier comes from the path, or from the body
// inside a multi-table transaction).
type TableChange struct {
	Ident        Ident
	Requirements json.RawMessage
	Updates      json.RawMessage
}

// Bounds on one commit. Engines send a handful of updates per commit (a
// create transaction a dozen); the bounds stop a body from making the
// server apply and validate millions of them.
const (
	MaxCommitUpdates      = 1000
	MaxCommitRequirements = 100
	MaxTransactionTables  = 100
)

// parsedChange is a decoded TableChange.
type parsedChange struct {
	TableChange
	reqs    []requirements.Requirement
	updates table.Updates
	// info is what the service reads of each update itself (tablemeta.UpdateInfo),
	// decoded once with the updates, for every attempt.
	info []tablemeta.UpdateInfo
	// event is the update event last built for the change (updateEvent),
	// for the table's UUID and location in eventKey.
	event    *store.Event
	eventKey string
}

func parseChange(c TableChange) (*parsedChange, error) {
	if err := validateIdent(c.Ident); err != nil {
		return nil, err
	}
	reqs, err := requirements.Parse(c.Requirements)
	if err != nil {
		return nil, err
	}
	if len(c.Updates) == 0 || string(c.Updates) == "null" {
		return nil, fault.New(fault.BadRequest, "Invalid commit: updates must be a list (empty for none)")
	}
	var ups table.Updates
	if err := json.Unmarshal(c.Updates, &ups); err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid updates: %s", fault.ClientText(err))
	}
	if len(ups) > MaxCommitUpdates || len(reqs) > MaxCommitRequirements {
		return nil, fault.New(fault.BadRequest, "Invalid commit: at most %d updates and %d requirements per table", MaxCommitUpdates, MaxCommitRequirements)
	}
	return &parsedChange{TableChange: c, reqs: reqs, updates: ups, info: tablemeta.ReadUpdates(c.Updates)}, nil
}

// staged is a change applied to a loaded table, with its metadata file
// written but not yet committed. base is the table's metadata before the
// change; entry, when set, is the new metadata to cache once it lands.
type staged struct {
	obj     *store.Object
	base    table.Metadata
	meta    table.Metadata
	data    []byte
	metaLoc string
	swap    store.Swap
	changed bool
	entry   *tablemeta.Entry
}

// stage loads the current table, checks requirements, applies updates and
// writes the new metadata file. Requirement failures are 409s that must not
// be retried; a table that vanished is a 404.
func (s *Service) stage(ctx context.Context, w *store.Warehouse, c *parsedChange) (*staged, error) {
	obj, prev, err := s.readTable(ctx, w.Name, c.Ident)
	if err != nil {
		return nil, err
	}
	base, version := prev.Meta, prev.Version
	if err := requirements.Check(c.reqs, base); err != nil {
		return nil, err
	}
	target, updates, err := v4commits.PlanUpdates(version, prev.NSnaps > 0, c.updates, c.info)
	if err != nil {
		return nil, err
	}
	if err := guardV4(ctx, target, "Cannot commit to "+c.Ident.String()); err != nil {
		return nil, err
	}
	st := &staged{obj: obj, base: base, meta: base, data: prev.Data, metaLoc: obj.MetadataLocation}
	meta, changed, err := tablemeta.Build(prev, obj.MetadataLocation, target != version, updates, c.info)
	if err != nil {
		return nil, err
	}
	if !changed {
		return st, nil
	}
	if err := s.checkTableMetadataLocations(w, tablemeta.AddedView(base, meta)); err != nil {
		return nil, err
	}
	enc, err := s.encodeChange(prev, meta, target)
	if err != nil {
		return nil, err
	}
	st.swap = store.Swap{
		ObjectID: obj.ID, ExpectedMetadataLocation: obj.MetadataLocation,
		NewMetadata: enc.data, NewFormatVersion: target, NewRefsMetadata: enc.refs,
	}
	metaLoc, newLoc, err := s.writeChecked(ctx, w, obj, meta, enc, &st.swap)
	if err != nil {
		return nil, err
	}
	st.swap.NewMetadataLocation, st.swap.NewLocation = metaLoc, newLoc
	st.meta, st.data, st.metaLoc, st.changed, st.entry = meta, enc.data, metaLoc, true, enc.entry
	return st, nil
}

// CommitTable applies one table change with server-side retries on lost
// races. assert-create on a missing table creates it (the second half of a
// staged create). Returns 404 NoSuchTable, 409 CommitFailed (nothing
// committed), 400 for invalid updates, 500 CommitStateUnknown only when the
// database commit itself failed mid-flight.
func (s *Service) CommitTable(ctx context.Context, warehouse string, change TableChange) (*TableResult, error) {
	c, err := parseChange(change)
	if err != nil {
		return nil, err
	}
	// assert-create finishes a staged create: creating, not writing.
	if requirements.HasAssertCreate(c.reqs) {
		err = s.authorize(ctx, PrivTableCreate, namespaceResource(warehouse, c.Ident.Namespace))
	} else {
		err = s.authorize(ctx, PrivTableWriteMetadata, tableResource(warehouse, c.Ident))
	}
	if err != nil {
		return nil, err
	}
	if err := guardV4Change(ctx, c); err != nil {
		return nil, err
	}
	w, err := s.warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	if requirements.HasAssertCreate(c.reqs) {
		if _, err := s.store.ObjectMetadataLocation(ctx, objRef(c.Ident, warehouse, store.KindTable)); errors.Is(err, store.ErrNotFound) {
			return s.createByCommit(ctx, w, c)
		}
	}
	if wantsV4Upgrade(c.info) {
		res, err := s.commitV4Upgrade(ctx, w, c)
		if res != nil {
			res.Warning = V4UpgradeWarning
		}
		return res, err
	}
	results, err := s.commit(ctx, w, []*parsedChange{c})
	if err != nil {
		return nil, err
	}
	st := results[0]
	return &TableResult{MetadataLocation: st.metaLoc, Metadata: st.data, Config: map[string]string{}}, nil
}

// CommitTransaction applies several table changes atomically: all land in
// one database transaction, or none. Each change needs an identifier; one
// table may appear once.
func (s *Service) CommitTransaction(ctx context.Context, warehouse string, changes []TableChange) error {
	if len(changes) == 0 {
		return fault.New(fault.BadRequest, "Invalid transaction: no table changes")
	}
	if len(changes) > MaxTransactionTables {
		return fault.New(fault.BadRequest, "Invalid transaction: at most %d tables per transaction", MaxTransactionTables)
	}
	parsed := make([]*parsedChange, 0, len(changes))
	seen := map[string]bool{}
	for _, ch := range changes {
		c, err := parseChange(ch)
		if err != nil {
			return err
		}
		key := c.Ident.String()
		if seen[key] {
			return fault.New(fault.BadRequest, "Invalid transaction: table %s appears twice", key)
		}
		seen[key] = true
		if requirements.HasAssertCreate(c.reqs) {
			return fault.New(fault.BadRequest, "Invalid transaction: assert-create is not supported in multi-table transactions (%s)", key)
		}
		if err := s.authorize(ctx, PrivTableWriteMetadata, tableResource(warehouse, c.Ident)); err != nil {
			return err
		}
		if err := guardV4Change(ctx, c); err != nil {
			return err
		}
		parsed = append(parsed, c)
	}
	w, err := s.warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	_, err = s.commit(ctx, w, parsed)
	return err
}

// commit stages every change and swaps their pointers in one transaction
// through the commit engine (runCommit). The staged results are those of
// the attempt that landed.
func (s *Service) commit(ctx context.Context, w *store.Warehouse, changes []*parsedChange) ([]*staged, error) {
	subject := "table"
	if len(changes) > 1 {
		subject = "tables"
	}
	var results []*staged
	err := s.runCommit(ctx, w, subject, func(ctx context.Context) (*commitengine.Attempt, error) {
		results = make([]*staged, 0, len(changes))
		a := &commitengine.Attempt{}
		for _, c := range changes {
			st, err := s.stage(ctx, w, c)
			if err != nil {
				return a, err
			}
			results = append(results, st)
			if st.changed {
				a.AddFile(st.metaLoc)
				a.Swaps = append(a.Swaps, st.swap)
				a.Jobs = append(a.Jobs, s.stagedJobs(w, c.Ident, st)...)
				s.addEvent(a, func() store.Event { return c.updateEvent(ctx, w.Name, st.meta) })
			}
		}
		a.Landed = func(ctx context.Context) {
			for _, st := range results {
				if st.changed {
					s.metaCache.Add(st.metaLoc, st.entry)
				}
			}
		}
		return a, nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// createByCommit creates a table from an assert-create commit: the updates
// build the metadata from nothing (a staged create or create transaction).
// Its outcome is reported to Options.OnCommit like every commit's.
func (s *Service) createByCommit(ctx context.Context, w *store.Warehouse, c *parsedChange) (*TableResult, error) {
	res, err := s.createFromUpdates(ctx, w, c)
	switch {
	case err == nil:
		s.engine.Report(commitengine.OutcomeCommitted)
	case fault.KindOf(err) == fault.CommitStateUnknown:
		s.engine.Report(commitengine.OutcomeUnknown)
	default:
		s.engine.Report(commitengine.StageOutcome(err))
	}
	return res, err
}

// createFromUpdates is createByCommit's work: build, check, write and
// create the table's row.
func (s *Service) createFromUpdates(ctx context.Context, w *store.Warehouse, c *parsedChange) (*TableResult, error) {
	if err := s.clockGuard(); err != nil {
		return nil, err
	}
	ns, err := s.store.NamespaceGet(ctx, w.Name, c.Ident.Namespace)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, nsNotFound(err, c.Ident.Namespace)
	} else if err != nil {
		return nil, storeErr(err, w.Name)
	}
	version := formatVersionOf(c.info)
	if version > FormatV4 {
		return nil, fault.New(fault.BadRequest, "Unsupported format version: %d (supported: 1 to 4)", version)
	}
	target, updates := version, c.updates
	if version == FormatV4 {
		if _, updates, err = v4commits.PlanUpdates(3, false, c.updates, c.info); err != nil {
			return nil, err
		}
		version = 3
	}
	b, err := table.NewMetadataBuilder(version)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "%s", fault.ClientText(err))
	}
	for _, u := range createOrder(updates) {
		if err := u.Apply(b); err != nil {
			return nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
		}
	}
	hasLocation := false
	for _, u := range c.updates {
		if u.Action() == "set-location" {
			hasLocation = true
		}
	}
	if !hasLocation {
		if err := b.SetLoc(defaultLocation(w, ns, c.Ident.Name)); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "set default location")
		}
	}
	meta, err := b.Build()
	if err != nil {
		return nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	if err := s.checkTableMetadataLocations(w, meta); err != nil {
		return nil, err
	}
	loc, err := checkObjectLocation(w, meta.Location())
	if err != nil {
		return nil, err
	}
	data, err := tablemeta.Marshal(meta, target)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode metadata")
	}
	if err := s.checkNewMetadata(nil, meta, data); err != nil {
		return nil, err
	}
	metaLoc := newMetadataLocation(meta.Location(), meta.Properties(), "")
	if err := s.writeMetadataFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: w.Name, Namespace: c.Ident.Namespace, Name: c.Ident.Name, Kind: store.KindTable,
		Location: loc, MetadataLocation: metaLoc, Metadata: data, FormatVersion: target,
		RefsMetadata: tablemeta.RefsDocument(meta, data),
	}
	ectx := s.withEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateTable, tableObject(w.Name, c.Ident, meta), who(ctx), c.Updates)
	})
	if err := s.store.ObjectCreate(ectx, obj); err != nil {
		s.dropUnlanded(ctx, w, err, metaLoc)
		var ae *store.AlreadyExistsError
		if errors.As(err, &ae) {
			if ae.Kind == store.KindView {
				return nil, fault.Wrap(fault.CommitFailed, err, "View with same name already exists: %s", c.Ident)
			}
			return nil, fault.Wrap(fault.CommitFailed, err, "Requirement failed: table already exists")
		}
		return nil, putErr(err, store.KindTable, c.Ident, w.Name)
	}
	return &TableResult{MetadataLocation: metaLoc, Metadata: data, Config: map[string]string{}}, nil
}

// createOrder orders the updates of a create-by-commit so that the schema
// is in place before specs and sort orders bind to it: format and uuid
// first, then schema updates, then the rest, each group in request order.
// Some writers (DuckDB) send set-current-schema last; the order of these
// groups does not change the resulting metadata of a new table.
func createOrder(ups table.Updates) table.Updates {
	phase := func(u table.Update) int {
		switch u.Action() {
		case "assign-uuid", "upgrade-format-version":
			return 0
		case "add-schema", "set-current-schema":
			return 1
		}
		return 2
	}
	out := slices.Clone(ups)
	slices.SortStableFunc(out, func(a, b table.Update) int { return phase(a) - phase(b) })
	return out
}

// formatVersionOf finds the format version a create commit asks for (the
// first upgrade-format-version update), defaulting to 2.
func formatVersionOf(info []tablemeta.UpdateInfo) int {
	for _, u := range info {
		if u.Action == "upgrade-format-version" && u.FormatVersion > 0 {
			return u.FormatVersion
		}
	}
	return table.DefaultFormatVersion
}
