// Package changeevents turns catalog changes into events: the operation
// objects of the Iceberg REST events proposal (apache/iceberg#12584), with
// secrets and paths outside the object's location removed, and their two
// wire forms, the REST Event of POST /v1/{prefix}/events and a CloudEvents
// 1.0 structured JSON document for brokers and webhooks. It is pure: values
// in, values out.
package changeevents

import (
	"encoding/json"
	"strings"

	"github.com/lakehold/catalog/store"
)

// Operation types of the proposal's standard operations; ours beyond them
// carry the x- prefix the proposal asks custom types to use.
const (
	CreateTable               = "create-table"
	RegisterTable             = "register-table"
	DropTable                 = "drop-table"
	UpdateTable               = "update-table"
	RenameTable               = "rename-table"
	CreateView                = "create-view"
	DropView                  = "drop-view"
	UpdateView                = "update-view"
	RenameView                = "rename-view"
	CreateNamespace           = "create-namespace"
	UpdateNamespaceProperties = "update-namespace-properties"
	DropNamespace             = "drop-namespace"
	// UndropTable and UndropView bring back a soft-deleted object.
	UndropTable = "x-lakehold.undrop-table"
	UndropView  = "x-lakehold.undrop-view"
	// UnregisterTable removes a table without deleting its files.
	UnregisterTable = "x-lakehold.unregister-table"
	// CreateFunction and DropFunction are a SQL UDF's creation and drop
	// (the proposal names no function operations).
	CreateFunction = "x-lakehold.create-function"
	DropFunction   = "x-lakehold.drop-function"
)

// Operations lists every operation type this catalog emits.
var Operations = []string{CreateTable, RegisterTable, DropTable, UpdateTable, RenameTable,
	CreateView, DropView, UpdateView, RenameView, CreateNamespace, UpdateNamespaceProperties,
	DropNamespace, UndropTable, UndropView, UnregisterTable, CreateFunction, DropFunction}

// Object names the object an event is about.
type Object struct {
	Warehouse string
	Namespace []string
	// Name is the table or view; empty for a namespace.
	Name string
	// Kind is store.KindTable, store.KindView or store.KindFunction;
	// ignored for a namespace.
	Kind store.ObjectKind
	// UUID is the table's, view's or function's UUID.
	UUID string
	// Location is the object's base location: paths under it may appear
	// in an event, any other is removed.
	Location string
}

// Who says which request made a change.
type Who struct {
	RequestID string
	Actor     string
}

type identifier struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func (o Object) ident() identifier {
	return identifier{Namespace: nonNil(o.Namespace), Name: o.Name}
}

func (o Object) uuidKey() string {
	switch o.Kind {
	case store.KindView:
		return "view-uuid"
	case store.KindFunction:
		return "function-uuid"
	}
	return "table-uuid"
}

func (o Object) objectType() string {
	if o.Name == "" {
		return "namespace"
	}
	return string(o.Kind)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// event assembles a store.Event from an operation body.
func event(op string, o Object, who Who, body map[string]any) store.Event {
	body["operation-type"] = op
	raw, err := json.Marshal(body)
	if err != nil { // the bodies are maps of strings, lists and raw JSON
		raw = []byte(`{"operation-type":"` + op + `"}`)
	}
	return store.Event{Warehouse: o.Warehouse, Namespace: nonNil(o.Namespace), Name: o.Name,
		ObjectType: o.objectType(), ObjectUUID: o.UUID, Operation: op,
		RequestID: who.RequestID, Actor: who.Actor, Body: raw}
}

// Create is a table's or view's creation (or a registration, with op
// RegisterTable); updates are the create's metadata updates, when known.
func Create(op string, o Object, who Who, updates json.RawMessage) store.Event {
	body := map[string]any{"identifier": o.ident(), o.uuidKey(): o.UUID}
	body["updates"] = Sanitize(updates, o.Location)
	return event(op, o, who, body)
}

// Update is a commit to a table or view: its updates and requirements as
// the client sent them (or as the catalog built them), sanitized.
func Update(o Object, who Who, updates, requirements json.RawMessage) store.Event {
	op := UpdateTable
	if o.Kind == store.KindView {
		op = UpdateView
	}
	body := map[string]any{"identifier": o.ident(), o.uuidKey(): o.UUID, "updates": Sanitize(updates, o.Location)}
	if len(requirements) > 0 && string(requirements) != "null" {
		body["requirements"] = Sanitize(requirements, o.Location)
	}
	return event(op, o, who, body)
}

// Drop is a table's, view's or function's drop (op DropTable, DropView,
// UnregisterTable or DropFunction); purge is whether the table's files go
// with it.
func Drop(op string, o Object, who Who, purge bool) store.Event {
	body := map[string]any{"identifier": o.ident(), o.uuidKey(): o.UUID}
	if op == DropTable {
		body["purge"] = purge
	}
	return event(op, o, who, body)
}

// Undrop is a soft-deleted object brought back, o naming it as it is now.
func Undrop(o Object, who Who, deletedID string) store.Event {
	op := UndropTable
	if o.Kind == store.KindView {
		op = UndropView
	}
	return event(op, o, who, map[string]any{"identifier": o.ident(), o.uuidKey(): o.UUID, "deleted-id": deletedID})
}

// Rename moves o (its current name) to a new namespace and name. The event
// is about the destination.
func Rename(o Object, who Who, toNamespace []string, toName string) store.Event {
	op := RenameTable
	if o.Kind == store.KindView {
		op = RenameView
	}
	src := o.ident()
	o.Namespace, o.Name = toNamespace, toName
	return event(op, o, who, map[string]any{o.uuidKey(): o.UUID, "source": src, "destination": o.ident()})
}

// NamespaceCreated is a namespace's creation with its properties.
func NamespaceCreated(warehouse string, ns []string, who Who, props map[string]string) store.Event {
	if props == nil {
		props = map[string]string{}
	}
	o := Object{Warehouse: warehouse, Namespace: ns}
	return event(CreateNamespace, o, who, map[string]any{"namespace": nonNil(ns), "properties": redactProps(props)})
}

// NamespaceUpdated is a namespace's property change: the keys set, removed
// and asked to be removed but missing.
func NamespaceUpdated(warehouse string, ns []string, who Who, updated, removed, missing []string) store.Event {
	o := Object{Warehouse: warehouse, Namespace: ns}
	body := map[string]any{"namespace": nonNil(ns), "updated": nonNil(updated), "removed": nonNil(removed)}
	if len(missing) > 0 {
		body["missing"] = missing
	}
	return event(UpdateNamespaceProperties, o, who, body)
}

// NamespaceDropped is a namespace's drop.
func NamespaceDropped(warehouse string, ns []string, who Who) store.Event {
	return event(DropNamespace, Object{Warehouse: warehouse, Namespace: ns}, who, map[string]any{"namespace": nonNil(ns)})
}

// secretWords mark a property key whose value is a credential: such values
// never reach an event.
var secretWords = []string{"secret", "password", "token", "credential", "private-key", "access-key", "session", "sas"}

// IsSecretKey reports whether a property key names a credential.
func IsSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Redacted replaces a removed value.
const Redacted = "<redacted>"

func redactProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		if IsSecretKey(k) {
			v = Redacted
		}
		out[k] = v
	}
	return out
}
