package service

import (
	"strings"

	"github.com/lakehold/catalog/store"
)

// Ident names a table or view inside a warehouse.
type Ident struct {
	Namespace []string
	Name      string
}

// String prints the identifier as Iceberg does in messages (levels and
// name joined by dots).
func (i Ident) String() string { return nsString(i.Namespace) + "." + i.Name }

func nsString(levels []string) string { return strings.Join(levels, ".") }

func (i Ident) ref(warehouse string, kind store.ObjectKind) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: i.Namespace, Name: i.Name, Kind: kind}
}

// validateNamespace rejects empty namespaces and empty levels.
func validateNamespace(levels []string) error {
	if len(levels) == 0 {
		return newErr(KindBadRequest, "Invalid namespace: empty namespace")
	}
	for _, l := range levels {
		if l == "" {
			return newErr(KindBadRequest, "Invalid namespace: empty level in %q", nsString(levels))
		}
	}
	return nil
}

func validateIdent(id Ident) error {
	if err := validateNamespace(id.Namespace); err != nil {
		return err
	}
	if id.Name == "" {
		return newErr(KindBadRequest, "Invalid identifier: empty name")
	}
	return nil
}
