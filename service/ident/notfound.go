package ident

import "github.com/lakehold/catalog/internal/fault"

// TableNotFound is the 404 NoSuchTableException for id, wrapping err
// (which may be nil).
func TableNotFound(err error, id Ident) error {
	return fault.Wrap(fault.NoSuchTable, err, "Table does not exist: %s", id)
}

// ViewNotFound is the 404 NoSuchViewException for id.
func ViewNotFound(err error, id Ident) error {
	return fault.Wrap(fault.NoSuchView, err, "View does not exist: %s", id)
}

// FunctionNotFound is the 404 NoSuchFunctionException for id.
func FunctionNotFound(err error, id Ident) error {
	return fault.Wrap(fault.NoSuchFunction, err, "Function does not exist: %s", id)
}

// NamespaceNotFound is the 404 NoSuchNamespaceException for levels.
func NamespaceNotFound(err error, levels []string) error {
	return fault.Wrap(fault.NoSuchNamespace, err, "Namespace does not exist: %s", NamespaceString(levels))
}

// WarehouseNotFound is the 404 NoSuchWarehouseException for name.
func WarehouseNotFound(err error, name string) error {
	return fault.Wrap(fault.NoSuchWarehouse, err, "Warehouse does not exist: %s", name)
}
