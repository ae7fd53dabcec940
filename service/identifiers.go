package service

import (
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// Name limits (package ident; docs/design.md, "Names").
const (
	MaxNameBytes      = ident.MaxNameBytes
	MaxNamespaceDepth = ident.MaxNamespaceDepth
	MaxNamespaceBytes = ident.MaxNamespaceBytes
)

// Ident names a table or view inside a warehouse (ident.Ident).
type Ident = ident.Ident

// ValidateNamespace checks namespace levels (ident.ValidateNamespace): 400
// for an empty, too deep or too long namespace or a bad level.
func ValidateNamespace(levels []string) error { return ident.ValidateNamespace(levels) }

// ValidateName checks a table or view name (ident.ValidateName): 400 when
// it breaks a rule.
func ValidateName(name string) error { return ident.ValidateName(name) }

// ValidateIdent checks the namespace and the name of id: 400 when either
// breaks a rule.
func ValidateIdent(id Ident) error { return ident.ValidateIdent(id) }

// objRef is id's key in the store for an object of kind.
func objRef(id Ident, warehouse string, kind store.ObjectKind) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind}
}
