package service

import (
	"github.com/lakehold/catalog/service/ident"
)

// Name limits (package ident; docs/design.md, "Names").
const (
	MaxNamespaceDepth = ident.MaxNamespaceDepth
	MaxNamespaceBytes = ident.MaxNamespaceBytes
)

// Ident names a table or view inside a warehouse (ident.Ident).
type Ident = ident.Ident
