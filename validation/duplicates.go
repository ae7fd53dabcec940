package validation

// CheckUniqueFiles refuses (ReasonDuplicateFile) the first file of names
// (relative to the table, in request order) that appears twice; kind
// names them in the message ("Data file", "Column file").
func CheckUniqueFiles(kind string, names []string) error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return reject(ReasonDuplicateFile, map[string]any{"file": n}, "%s %s is named twice in this commit", kind, n)
		}
		seen[n] = true
	}
	return nil
}

// LiveDuplicate refuses (ReasonDuplicateFile) a file a commit adds that is
// already a live file of the table (what: "data file", "column file of
// data/a.parquet"...): committing it again would make readers see its
// rows twice.
func LiveDuplicate(kind, name, what string) error {
	return reject(ReasonDuplicateFile, map[string]any{"file": name},
		"%s %s is already a live %s of the table; remove it first or commit a new file", kind, name, what)
}
