package catalogimport

import (
	"fmt"
	"io"
	"strings"
)

// Kind is what an item of the report is.
type Kind string

// The kinds of objects an import handles.
const (
	KindNamespace Kind = "namespace"
	KindTable     Kind = "table"
	KindView      Kind = "view"
)

// Status is what the import did with an item.
type Status string

// The outcomes of one item. Imported and WouldImport are the success of a
// run and of a dry run; Skipped means the target already has the item as
// the source has it (or, for a namespace, already has it); Refused means
// nothing of the item was written.
const (
	Imported    Status = "imported"
	WouldImport Status = "would-import"
	Skipped     Status = "skipped"
	Refused     Status = "refused"
)

// Item is one namespace, table or view and what became of it.
type Item struct {
	Kind      Kind     `json:"kind"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name,omitempty"`
	Status    Status   `json:"status"`
	// Reason says why an item was skipped or refused (the target's
	// answer, when it refused).
	Reason string `json:"reason,omitempty"`
	// MetadataLocation is the source's, kept as it is (tables and views).
	MetadataLocation string `json:"metadata-location,omitempty"`
}

// FullName is the dotted name of the item (namespace levels, then name).
func (it Item) FullName() string {
	parts := append(append([]string{}, it.Namespace...), it.Name)
	if it.Name == "" {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, ".")
}

// Report is the outcome of an import, item by item in the order handled.
type Report struct {
	DryRun bool `json:"dry-run"`
	// Note says what a dry run checked ("" for a real run).
	Note string `json:"note,omitempty"`
	// Stopped is why the run stopped before settling every item ("" when
	// it did not): the items listed were settled, the rest not tried.
	Stopped string `json:"stopped,omitempty"`
	Items   []Item `json:"items"`
}

// Count returns how many items of kind k have status s.
func (r *Report) Count(k Kind, s Status) int {
	n := 0
	for _, it := range r.Items {
		if it.Kind == k && it.Status == s {
			n++
		}
	}
	return n
}

// Refused lists the refused items.
func (r *Report) Refused() []Item {
	var out []Item
	for _, it := range r.Items {
		if it.Status == Refused {
			out = append(out, it)
		}
	}
	return out
}

// Wrote reports whether the run wrote anything: an item Imported.
func (r *Report) Wrote() bool {
	for _, it := range r.Items {
		if it.Status == Imported {
			return true
		}
	}
	return false
}

// WriteSummary writes the counts per kind and status, then every skipped
// and refused item by name with its reason.
func (r *Report) WriteSummary(w io.Writer) {
	done := Imported
	if r.DryRun {
		done = WouldImport
		fmt.Fprintln(w, "dry run: nothing was written to the target")
		if r.Note != "" {
			fmt.Fprintln(w, r.Note)
		}
	}
	for _, k := range []Kind{KindNamespace, KindTable, KindView} {
		fmt.Fprintf(w, "%-10s %d %s, %d skipped, %d refused\n", string(k)+"s:",
			r.Count(k, done), done, r.Count(k, Skipped), r.Count(k, Refused))
	}
	for _, s := range []Status{Skipped, Refused} {
		for _, it := range r.Items {
			if it.Status == s {
				fmt.Fprintf(w, "%s %s %s: %s\n", s, it.Kind, it.FullName(), it.Reason)
			}
		}
	}
}
