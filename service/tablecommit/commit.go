package tablecommit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// Change is a decoded TableChange: its requirements (Reqs) and updates
// (Parsed), and what the commit reads of each update itself (Info,
// tablemeta.UpdateInfo), decoded once for every attempt.
type Change struct {
	TableChange
	Reqs   []requirements.Requirement
	Parsed table.Updates
	Info   []tablemeta.UpdateInfo
	// event is the update event last built for the change (updateEvent),
	// for the table's UUID and location in eventKey.
	event    *store.Event
	eventKey string
}

// Parse decodes c: 400 for an invalid identifier, requirements or
// updates, or more of them than the bounds allow.
func Parse(c TableChange) (*Change, error) {
	if err := ident.ValidateIdent(c.Ident); err != nil {
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
	return &Change{TableChange: c, Reqs: reqs, Parsed: ups, Info: tablemeta.ReadUpdates(c.Updates)}, nil
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
func (tc *Committer) stage(ctx context.Context, w *store.Warehouse, c *Change) (*staged, error) {
	obj, prev, err := tc.d.Tables.ReadTable(ctx, w.Name, c.Ident)
	if err != nil {
		return nil, err
	}
	base, version := prev.Meta, prev.Version
	if err := requirements.Check(c.Reqs, base); err != nil {
		return nil, err
	}
	target, updates, err := v4commits.PlanUpdates(version, prev.NSnaps > 0, c.Parsed, c.Info)
	if err != nil {
		return nil, err
	}
	if err := tableaccess.GuardV4(ctx, target, "Cannot commit to "+c.Ident.String()); err != nil {
		return nil, err
	}
	st := &staged{obj: obj, base: base, meta: base, data: prev.Data, metaLoc: obj.MetadataLocation}
	meta, changed, err := tablemeta.Build(prev, obj.MetadataLocation, target != version, updates, c.Info)
	if err != nil {
		return nil, err
	}
	if !changed {
		return st, nil
	}
	if err := locations.CheckTableMetadataLocations(w, tablemeta.AddedView(base, meta)); err != nil {
		return nil, err
	}
	enc, err := tc.d.Tables.Encode(prev, meta, target)
	if err != nil {
		return nil, err
	}
	st.swap = store.Swap{
		ObjectID: obj.ID, ExpectedMetadataLocation: obj.MetadataLocation,
		NewMetadata: enc.Data, NewFormatVersion: target, NewRefsMetadata: enc.Refs,
		AddsListed: !addsFiles(updates),
	}
	metaLoc, newLoc, err := tc.writeChecked(ctx, w, obj, meta, enc, &st.swap)
	if err != nil {
		return nil, err
	}
	st.swap.NewMetadataLocation, st.swap.NewLocation = metaLoc, newLoc
	st.meta, st.data, st.metaLoc, st.changed, st.entry = meta, enc.Data, metaLoc, true, enc.Entry
	return st, nil
}

// Checked is a table change parsed, authorized and guarded, with its
// warehouse: what Prepare answers and Commit takes.
type Checked struct {
	Warehouse *store.Warehouse
	Change    *Change
	// Creates says the change finishes a staged create of a missing table.
	Creates bool
}

// Upgrades reports whether the change upgrades an existing table to format
// version 4. Commit refuses such a change: the upgrade is package
// v4migrate's, a layer above, whose caller commits it instead.
func (k *Checked) Upgrades() bool { return !k.Creates && WantsV4Upgrade(k.Change.Info) }

// Prepare is the first half of a single-table commit: it parses change,
// authorizes it (table-create for an assert-create, table-write-metadata
// otherwise), guards a v4 change and reads the warehouse. Returns 400 for
// an invalid change, 403 when denied, 404 for a missing warehouse.
func (tc *Committer) Prepare(ctx context.Context, warehouse string, change TableChange) (*Checked, error) {
	c, err := Parse(change)
	if err != nil {
		return nil, err
	}
	// assert-create finishes a staged create: creating, not writing.
	if requirements.HasAssertCreate(c.Reqs) {
		err = tc.d.Tables.Authorize(ctx, access.PrivTableCreate, access.NamespaceResource(warehouse, c.Ident.Namespace))
	} else {
		err = tc.d.Tables.Authorize(ctx, access.PrivTableWriteMetadata, access.TableResource(warehouse, c.Ident.Namespace, c.Ident.Name))
	}
	if err != nil {
		return nil, err
	}
	if err := tc.guardV4Change(ctx, c); err != nil {
		return nil, err
	}
	w, err := tc.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	k := &Checked{Warehouse: w, Change: c}
	if requirements.HasAssertCreate(c.Reqs) {
		ref := store.ObjectRef{Warehouse: warehouse, Namespace: c.Ident.Namespace, Name: c.Ident.Name, Kind: store.KindTable}
		_, err := tc.d.Tables.Store().ObjectMetadataLocation(ctx, ref)
		k.Creates = errors.Is(err, store.ErrNotFound)
	}
	return k, nil
}

// Commit applies a prepared table change with server-side retries on lost
// races. assert-create on a missing table creates it (the second half of a
// staged create). Returns 404 NoSuchTable, 409 CommitFailed (nothing
// committed), 400 for invalid updates, 500 CommitStateUnknown only when the
// database commit itself failed mid-flight, and 500 for a change that
// Upgrades (its caller commits those through v4migrate).
func (tc *Committer) Commit(ctx context.Context, k *Checked) (*Result, error) {
	if k.Creates {
		return tc.createByCommit(ctx, k.Warehouse, k.Change)
	}
	if k.Upgrades() {
		return nil, fault.New(fault.Internal, "An upgrade to format version 4 is committed through the v4 migration")
	}
	results, err := tc.commit(ctx, k.Warehouse, []*Change{k.Change})
	if err != nil {
		return nil, err
	}
	st := results[0]
	return &Result{MetadataLocation: st.metaLoc, Metadata: st.data}, nil
}

// CommitTransaction applies several table changes atomically: all land in
// one database transaction, or none. Each change needs an identifier; one
// table may appear once (400 otherwise, and for assert-create); other
// errors are Prepare's and Commit's.
func (tc *Committer) CommitTransaction(ctx context.Context, warehouse string, changes []TableChange) error {
	if len(changes) == 0 {
		return fault.New(fault.BadRequest, "Invalid transaction: no table changes")
	}
	if len(changes) > MaxTransactionTables {
		return fault.New(fault.BadRequest, "Invalid transaction: at most %d tables per transaction", MaxTransactionTables)
	}
	parsed := make([]*Change, 0, len(changes))
	seen := map[string]bool{}
	for _, ch := range changes {
		c, err := Parse(ch)
		if err != nil {
			return err
		}
		key := c.Ident.String()
		if seen[key] {
			return fault.New(fault.BadRequest, "Invalid transaction: table %s appears twice", key)
		}
		seen[key] = true
		if requirements.HasAssertCreate(c.Reqs) {
			return fault.New(fault.BadRequest, "Invalid transaction: assert-create is not supported in multi-table transactions (%s)", key)
		}
		if err := tc.d.Tables.Authorize(ctx, access.PrivTableWriteMetadata, access.TableResource(warehouse, c.Ident.Namespace, c.Ident.Name)); err != nil {
			return err
		}
		if err := tc.guardV4Change(ctx, c); err != nil {
			return err
		}
		parsed = append(parsed, c)
	}
	w, err := tc.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	_, err = tc.commit(ctx, w, parsed)
	return err
}

// commit stages every change and swaps their pointers in one transaction
// through the commit engine. The staged results are those of
// the attempt that landed.
func (tc *Committer) commit(ctx context.Context, w *store.Warehouse, changes []*Change) ([]*staged, error) {
	subject := "table"
	if len(changes) > 1 {
		subject = "tables"
	}
	var results []*staged
	err := tc.d.Engine.Run(ctx, w, subject, func(ctx context.Context) (*commitengine.Attempt, error) {
		results = make([]*staged, 0, len(changes))
		a := &commitengine.Attempt{}
		var swapped []*staged // a.Swaps[i] is swapped[i]'s
		for _, c := range changes {
			st, err := tc.stage(ctx, w, c)
			if err != nil {
				return a, err
			}
			results = append(results, st)
			if st.changed {
				a.AddFile(st.metaLoc)
				a.Swaps, swapped = append(a.Swaps, st.swap), append(swapped, st)
				a.Jobs = append(a.Jobs, tc.stagedJobs(w, c.Ident, st)...)
				tc.d.Tables.AddEvent(a, func() store.Event { return tc.updateEvent(ctx, c, w.Name, st.meta) })
			}
		}
		a.ListAdds = tc.listAdds(w, swapped)
		a.Landed = func(ctx context.Context) {
			for _, st := range results {
				if st.changed {
					tc.d.Tables.CacheMeta(st.metaLoc, st.entry)
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
// Its outcome is reported through the engine like every commit's.
func (tc *Committer) createByCommit(ctx context.Context, w *store.Warehouse, c *Change) (*Result, error) {
	res, err := tc.createFromUpdates(ctx, w, c)
	switch {
	case err == nil:
		tc.d.Engine.Report(commitengine.OutcomeCommitted)
	case fault.KindOf(err) == fault.CommitStateUnknown:
		tc.d.Engine.Report(commitengine.OutcomeUnknown)
	default:
		tc.d.Engine.Report(commitengine.StageOutcome(err))
	}
	return res, err
}

// createFromUpdates is createByCommit's work: build, check, write and
// create the table's row.
func (tc *Committer) createFromUpdates(ctx context.Context, w *store.Warehouse, c *Change) (*Result, error) {
	if err := tc.d.Tables.ClockGuard(); err != nil {
		return nil, err
	}
	ns, err := tc.d.Tables.Store().NamespaceGet(ctx, w.Name, c.Ident.Namespace)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, ident.NamespaceNotFound(err, c.Ident.Namespace)
	} else if err != nil {
		return nil, storefault.Of(err, w.Name)
	}
	version := formatVersionOf(c.Info)
	if version > v4commits.FormatV4 {
		return nil, fault.New(fault.BadRequest, "Unsupported format version: %d (supported: 1 to 4)", version)
	}
	target, updates := version, c.Parsed
	if version == v4commits.FormatV4 {
		if _, updates, err = v4commits.PlanUpdates(3, false, c.Parsed, c.Info); err != nil {
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
	for _, u := range c.Parsed {
		if u.Action() == "set-location" {
			hasLocation = true
		}
	}
	if !hasLocation {
		if err := b.SetLoc(locations.DefaultLocation(w, ns, c.Ident.Name)); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "set default location")
		}
	}
	meta, err := b.Build()
	if err != nil {
		return nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	if err := locations.CheckTableMetadataLocations(w, meta); err != nil {
		return nil, err
	}
	loc, err := locations.CheckObjectLocation(w, meta.Location())
	if err != nil {
		return nil, err
	}
	data, err := tablemeta.Marshal(meta, target)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode metadata")
	}
	if err := tc.d.Tables.CheckNewMetadata(nil, meta, data); err != nil {
		return nil, err
	}
	metaLoc := tableaccess.NewMetadataLocation(meta.Location(), meta.Properties(), "")
	if err := tc.d.Tables.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: w.Name, Namespace: c.Ident.Namespace, Name: c.Ident.Name, Kind: store.KindTable,
		Location: loc, MetadataLocation: metaLoc, Metadata: data, FormatVersion: target,
		RefsMetadata: tablemeta.RefsDocument(meta, data),
	}
	ectx := tc.d.Tables.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateTable, tableaccess.TableObject(w.Name, c.Ident, meta), tableaccess.Who(ctx), c.Updates)
	})
	if err := tc.d.Tables.Store().ObjectCreate(ectx, obj); err != nil {
		tc.d.Engine.DropUnlanded(ctx, w, err, metaLoc)
		var ae *store.AlreadyExistsError
		if errors.As(err, &ae) {
			if ae.Kind == store.KindView {
				return nil, fault.Wrap(fault.CommitFailed, err, "View with same name already exists: %s", c.Ident)
			}
			if ae.Kind == store.KindFunction {
				return nil, fault.Wrap(fault.CommitFailed, err, "Function with same name already exists: %s", c.Ident)
			}
			return nil, fault.Wrap(fault.CommitFailed, err, "Requirement failed: table already exists")
		}
		return nil, tableaccess.PutErr(err, store.KindTable, c.Ident, w.Name)
	}
	return &Result{MetadataLocation: metaLoc, Metadata: data}, nil
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

// guardV4Change refuses, before the table is read, a change that upgrades
// to format version 4 for a caller that does not read v4 (GuardV4's 400).
// A change to a table that already is v4 is refused once its version is
// known (stage).
func (tc *Committer) guardV4Change(ctx context.Context, c *Change) error {
	if !WantsV4Upgrade(c.Info) {
		return nil
	}
	return tableaccess.GuardV4(ctx, v4commits.FormatV4, "Cannot commit to "+c.Ident.String())
}

// updateEvent is c's update-table event for the table as staged (meta).
// Building it sanitizes the client's updates; each attempt of the commit
// reuses it while the table's UUID and location stay what they were.
func (tc *Committer) updateEvent(ctx context.Context, c *Change, warehouse string, meta table.Metadata) store.Event {
	o := tableaccess.TableObject(warehouse, c.Ident, meta)
	if key := o.UUID + " " + o.Location; c.event == nil || c.eventKey != key {
		ev := changeevents.Update(o, tableaccess.Who(ctx), c.Updates, c.Requirements)
		c.event, c.eventKey = &ev, key
	}
	return *c.event
}

// StagePlain stages c into a as Commit does for any single table, for
// the v4 upgrade of a table it need not convert. Errors are stage's: 404
// for a missing table, 409 for a failed requirement, 400 for invalid
// updates or metadata, and the metadata write's.
func (tc *Committer) StagePlain(ctx context.Context, w *store.Warehouse, c *Change, a *commitengine.Attempt) (*Result, error) {
	st, err := tc.stage(ctx, w, c)
	if err != nil {
		return nil, err
	}
	if st.changed {
		a.AddFile(st.metaLoc)
		a.Swaps = []store.Swap{st.swap}
		a.ListAdds = tc.listAdds(w, []*staged{st})
		a.Jobs = tc.stagedJobs(w, c.Ident, st)
		a.Landed = func(context.Context) { tc.d.Tables.CacheMeta(st.metaLoc, st.entry) }
	}
	return &Result{MetadataLocation: st.metaLoc, Metadata: st.data}, nil
}

// addsFiles reports whether ups may make the table reference a file it did
// not before: a snapshot (its manifest list, manifests and their files)
// or a statistics file. Such a commit is staged without listing what it
// adds (reading the new manifests would cost every append); only when an
// orphan-file removal holds the table does the engine have them listed
// (listAdds) and swap again (store.Swap.AddsListed).
func addsFiles(ups table.Updates) bool {
	for _, u := range ups {
		switch u.Action() {
		case table.UpdateAddSnapshot, table.UpdateSetStatistics, table.UpdateSetPartitionStatistics:
			return true
		}
	}
	return false
}

// WantsV4Upgrade reports whether a commit's updates upgrade to format 4.
func WantsV4Upgrade(info []tablemeta.UpdateInfo) bool {
	for _, u := range info {
		if u.Action == "upgrade-format-version" && u.FormatVersion == v4commits.FormatV4 {
			return true
		}
	}
	return false
}
