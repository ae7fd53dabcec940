// Package catalogimport moves the catalog entries of another Iceberg REST
// catalog into a Lakehold warehouse without copying data: it reads every
// namespace (with its properties), table and view of the source over the
// REST API, creates the namespaces in the target and registers each table
// and view there at the source's metadata location. Each object is one
// request the target applies whole or refuses, so nothing is half
// imported; what is already there is skipped, so a rerun is safe; what
// cannot be imported is reported by name with the reason. It is the
// engine of `catalog import` and knows nothing of the server side.
package catalogimport

import (
	"context"
	"fmt"
	"strings"
)

// Options say what to import and how.
type Options struct {
	// Namespaces limits the import to these namespaces and the ones
	// below them (nil: all). Their parents are created too.
	Namespaces [][]string
	// DryRun reads both catalogs and writes nothing.
	DryRun bool
	// Dialects are the SQL dialects (lowercase) a view's current version
	// may use (nil: DefaultDialects).
	Dialects []string
	// MaxObjects, when above 0, bounds the namespaces, tables and views
	// one run handles: past it the run stops before writing anything, with
	// a *LimitError.
	MaxObjects int
	// Progress, when set, is called once per item as it is settled, with
	// how many items have been settled and how many there are.
	Progress func(done, total int, it Item)
}

// pending is a table or view read from the source, not yet settled.
type pending struct {
	item     Item
	location string // the object's location, canonical when it can be
}

// Run imports from src into dst as o says. It fails, with the report so
// far, only when the source cannot be read or the target cannot be asked
// whether an object exists; every refusal of a single object is in the
// report instead; the report's Stopped then says why.
func Run(ctx context.Context, src *Source, dst Target, o Options) (*Report, error) {
	r := &Report{DryRun: o.DryRun}
	err := run(ctx, src, dst, o, r)
	if err != nil {
		r.Stopped = err.Error()
	}
	return r, err
}

func run(ctx context.Context, src *Source, dst Target, o Options, r *Report) error {
	nss, inside, err := namespacesToImport(ctx, src, o.Namespaces, limit{max: o.MaxObjects}.left(0))
	if err != nil {
		return limit{max: o.MaxObjects}.over(fmt.Errorf("source: list namespaces: %w", err))
	}
	lim := limit{max: o.MaxObjects, namespaces: len(nss)}
	objs, err := readObjects(ctx, src, inside, dialectSet(o.Dialects), lim)
	if err != nil {
		return err
	}
	if o.DryRun {
		r.Note = precheckLocations(ctx, dst, objs)
	}
	total := len(nss) + len(objs)
	settle := func(it Item) {
		r.Items = append(r.Items, it)
		if o.Progress != nil {
			o.Progress(len(r.Items), total, it)
		}
	}
	refusedNS := map[string]string{}
	for _, ns := range nss {
		it, err := importNamespace(ctx, src, dst, ns, refusedNS, o.DryRun)
		if err != nil {
			return err
		}
		if it.Status == Refused {
			refusedNS[key(ns)] = it.FullName()
		}
		settle(it)
	}
	for _, p := range objs {
		if err := importObject(ctx, dst, p, refusedNS, o.DryRun); err != nil {
			return err
		}
		settle(p.item)
	}
	return nil
}

// namespacesToImport lists the source's namespaces to create, each
// before its children, and among them those whose tables and views are
// imported: a namespace a filter names or lies under. A parent of a
// filtered namespace is created (the child needs it) without its objects.
// The walk descends only into those, and stops past max (max < 0: none).
func namespacesToImport(ctx context.Context, src *Source, filter [][]string, max int) (create, inside [][]string, err error) {
	if len(filter) == 0 {
		all, err := src.Namespaces(ctx, nil, max)
		return all, all, err
	}
	// No namespace below one that is neither inside a filter nor a
	// parent of one can be either, so the walk skips it whole.
	keep := func(ns []string) bool { in, parent := placed(ns, filter); return in || parent }
	create, err = src.Namespaces(ctx, keep, max)
	if err != nil {
		return nil, nil, err
	}
	for _, ns := range create {
		if in, _ := placed(ns, filter); in {
			inside = append(inside, ns)
		}
	}
	return create, inside, nil
}

// placed says whether ns is a filtered namespace or below one (in), or
// above one (parent).
func placed(ns []string, filter [][]string) (in, parent bool) {
	for _, f := range filter {
		in = in || (len(ns) >= len(f) && hasPrefix(ns, f))
		parent = parent || (len(ns) < len(f) && hasPrefix(f, ns))
	}
	return in, parent
}

// readObjects loads every table and view of the namespaces nss and
// refuses, before anything is written, the views whose dialect is not in
// dialects and the objects whose locations overlap.
func readObjects(ctx context.Context, src *Source, nss [][]string, dialects map[string]bool, lim limit) ([]*pending, error) {
	var objs []*pending
	for _, ns := range nss {
		tables, err := src.Tables(ctx, ns, lim.left(len(objs)))
		if err != nil {
			return nil, lim.over(fmt.Errorf("source: list tables of %s: %w", strings.Join(ns, "."), err))
		}
		for _, name := range tables {
			o, err := src.LoadTable(ctx, ns, name)
			if err != nil {
				return nil, fmt.Errorf("source: load table %s.%s: %w", strings.Join(ns, "."), name, err)
			}
			objs = append(objs, newPending(KindTable, o))
		}
		views, err := src.Views(ctx, ns, lim.left(len(objs)))
		if err != nil {
			return nil, lim.over(fmt.Errorf("source: list views of %s: %w", strings.Join(ns, "."), err))
		}
		for _, name := range views {
			o, err := src.LoadView(ctx, ns, name)
			if err != nil {
				return nil, fmt.Errorf("source: load view %s.%s: %w", strings.Join(ns, "."), name, err)
			}
			p := newPending(KindView, o)
			if reason := checkDialects(o.Metadata, dialects); reason != "" {
				p.refuse(reason)
			}
			objs = append(objs, p)
		}
	}
	for i, reason := range overlaps(objs) {
		if objs[i].item.Status == "" {
			objs[i].refuse(reason)
		}
	}
	return objs, nil
}

func newPending(k Kind, o *Object) *pending {
	return &pending{
		item:     Item{Kind: k, Namespace: o.Namespace, Name: o.Name, MetadataLocation: o.MetadataLocation},
		location: objectLocation(o.Metadata),
	}
}

func (p *pending) refuse(reason string) { p.item.Status, p.item.Reason = Refused, reason }

// importNamespace creates ns in the target with the source's properties,
// unless it is there (skipped; a difference in properties is reported,
// not changed) or its parent was refused.
func importNamespace(ctx context.Context, src *Source, dst Target, ns []string, refused map[string]string, dry bool) (Item, error) {
	it := Item{Kind: KindNamespace, Namespace: ns}
	if len(ns) > 1 {
		if parent, ok := refused[key(ns[:len(ns)-1])]; ok {
			it.Status, it.Reason = Refused, "its parent namespace "+parent+" was refused"
			return it, nil
		}
	}
	props, err := src.NamespaceProperties(ctx, ns)
	if err != nil {
		return it, fmt.Errorf("source: load namespace %s: %w", it.FullName(), err)
	}
	have, exists, err := dst.NamespaceProperties(ctx, ns)
	if err != nil {
		return it, fmt.Errorf("target: load namespace %s: %w", it.FullName(), err)
	}
	switch {
	case exists:
		it.Status, it.Reason = Skipped, "already in the target"
		if diff := propertyDiff(props, have); diff != "" {
			it.Reason += "; its properties differ from the source's (" + diff + "), left as they are"
		}
	case dry:
		it.Status = WouldImport
	default:
		if err := dst.CreateNamespace(ctx, ns, props); err != nil {
			it.Status, it.Reason = Refused, "the target refused it: "+err.Error()
		} else {
			it.Status = Imported
		}
	}
	return it, nil
}

// importObject registers a table or view at its source metadata
// location, unless refused already, its namespace was refused, or the
// target has that name (skipped when at the same metadata location,
// refused otherwise).
func importObject(ctx context.Context, dst Target, p *pending, refusedNS map[string]string, dry bool) error {
	it := &p.item
	if it.Status == Refused {
		return nil
	}
	if ns, ok := refusedNS[key(it.Namespace)]; ok {
		p.refuse("its namespace " + ns + " was refused")
		return nil
	}
	lookup, register := dst.TableLocation, dst.RegisterTable
	if it.Kind == KindView {
		lookup, register = dst.ViewLocation, dst.RegisterView
	}
	have, exists, err := lookup(ctx, it.Namespace, it.Name)
	if err != nil {
		return fmt.Errorf("target: load %s %s: %w", it.Kind, it.FullName(), err)
	}
	switch {
	case exists && canonical(have) == canonical(it.MetadataLocation):
		it.Status, it.Reason = Skipped, "already in the target at the same metadata location"
	case exists:
		p.refuse("the target has a " + string(it.Kind) + " of that name at another metadata location")
	case dry:
		it.Status = WouldImport
	default:
		if err := register(ctx, it.Namespace, it.Name, it.MetadataLocation); err != nil {
			p.refuse("the target refused it: " + err.Error())
		} else {
			it.Status = Imported
		}
	}
	return nil
}

// propertyDiff names the keys whose values differ between want and have
// ("" when none).
func propertyDiff(want, have map[string]string) string {
	var keys []string
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return strings.Join(sortedKeys(toSet(keys)), ", ")
}

func dialectSet(ds []string) map[string]bool {
	if ds == nil {
		ds = DefaultDialects
	}
	m := map[string]bool{}
	for _, d := range ds {
		m[strings.ToLower(strings.TrimSpace(d))] = true
	}
	return m
}

// key is a namespace as a map key (levels joined by the unit separator,
// which names do not contain).
func key(ns []string) string { return strings.Join(ns, "\x1f") }

func toSet(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}
