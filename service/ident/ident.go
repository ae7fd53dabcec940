// Package ident names catalog objects: the identifier of a table or
// view, the limits and rules every name and namespace follows, and the
// not-found errors, which are also what a caller who may not see an
// object gets (so that names do not leak). It is a leaf: access control,
// the store adapters and the orchestration all use it.
package ident

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lakehold/catalog/internal/fault"
)

// Name limits (docs/design.md, "Names"). They keep every name storable in
// one index row on both databases and every path of bounded length.
const (
	// MaxNameBytes bounds a table name, a view name and a namespace level.
	MaxNameBytes = 255
	// MaxNamespaceDepth bounds the levels of a namespace.
	MaxNamespaceDepth = 16
	// MaxNamespaceBytes bounds a whole namespace: its levels plus one
	// separator byte between each two.
	MaxNamespaceBytes = 1024
)

// Ident names a table or view inside a warehouse.
type Ident struct {
	Namespace []string
	Name      string
}

// String prints the identifier as Iceberg does in messages (levels and
// name joined by dots).
func (i Ident) String() string { return NamespaceString(i.Namespace) + "." + i.Name }

// NamespaceString prints namespace levels as Iceberg does in messages,
// joined by dots.
func NamespaceString(levels []string) string { return strings.Join(levels, ".") }

// checkName applies the rules every name and namespace level follows: not
// empty, at most MaxNameBytes, valid UTF-8, no control character (C0, DEL,
// C1; this includes NUL and the 0x1F namespace separator, which would make
// ["a\x1fb"] and ["a","b"] the same key). what names the thing in the
// message ("name", "namespace level").
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s", what)
	case len(s) > MaxNameBytes:
		return fmt.Errorf("%s is %d bytes long, the limit is %d", what, len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q contains the control character U+%04X; control characters are not allowed", what, s, r)
		}
	}
	return nil
}

// ValidateNamespace returns a 400 BadRequest error naming the broken rule
// when levels is empty, deeper than MaxNamespaceDepth, longer than
// MaxNamespaceBytes in all, or holds a level that breaks the name rules.
func ValidateNamespace(levels []string) error {
	if len(levels) == 0 {
		return fault.New(fault.BadRequest, "Invalid namespace: empty namespace")
	}
	if len(levels) > MaxNamespaceDepth {
		return fault.New(fault.BadRequest, "Invalid namespace: %d levels, the limit is %d", len(levels), MaxNamespaceDepth)
	}
	total := len(levels) - 1
	for _, l := range levels {
		total += len(l)
	}
	if total > MaxNamespaceBytes {
		return fault.New(fault.BadRequest, "Invalid namespace: %d bytes long, the limit is %d", total, MaxNamespaceBytes)
	}
	for _, l := range levels {
		if err := checkName("namespace level", l); err != nil {
			if len(levels) == 1 {
				return fault.New(fault.BadRequest, "Invalid namespace: %s", fault.ClientText(err))
			}
			return fault.New(fault.BadRequest, "Invalid namespace %q: %v", NamespaceString(levels), err)
		}
	}
	return nil
}

// ValidateName returns a 400 BadRequest error naming the broken rule when a
// table or view name is empty, longer than MaxNameBytes, not valid UTF-8
// or holds a control character.
func ValidateName(name string) error {
	if err := checkName("name", name); err != nil {
		return fault.New(fault.BadRequest, "Invalid identifier: %s", fault.ClientText(err))
	}
	return nil
}

// ValidateIdent checks the namespace and the name of id (see
// ValidateNamespace and ValidateName).
func ValidateIdent(id Ident) error {
	if err := ValidateNamespace(id.Namespace); err != nil {
		return err
	}
	return ValidateName(id.Name)
}
