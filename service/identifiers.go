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

// validateNamespace and validateIdent are the names the rest of the
// package calls.
func validateNamespace(levels []string) error { return ident.ValidateNamespace(levels) }

func validateIdent(id Ident) error { return ident.ValidateIdent(id) }

func nsString(levels []string) string { return ident.NamespaceString(levels) }

// objRef is id's key in the store for an object of kind.
func objRef(id Ident, warehouse string, kind store.ObjectKind) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind}
}

func tableNotFound(err error, id Ident) error { return ident.TableNotFound(err, id) }

func viewNotFound(err error, id Ident) error { return ident.ViewNotFound(err, id) }

func nsNotFound(err error, levels []string) error { return ident.NamespaceNotFound(err, levels) }
