package service

import (
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// Name limits (package ident; docs/design.md, "Names").
const (
	MaxNamespaceDepth = ident.MaxNamespaceDepth
	MaxNamespaceBytes = ident.MaxNamespaceBytes
)

// Ident names a table or view inside a warehouse (ident.Ident).
type Ident = ident.Ident

// objRef is id's key in the store for an object of kind.
func objRef(id Ident, warehouse string, kind store.ObjectKind) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind}
}
