// Package tablemeta holds table metadata documents for the commit path:
// it parses a stored document once (formats 1 to 4; iceberg-go models up
// to 3, so a v4 document travels as its v3 view), keeps parsed documents in
// a bounded cache keyed by their immutable location, builds a commit's
// metadata with iceberg-go's public builder on a light base (only the
// snapshots the updates can touch), and encodes the result by splicing the
// previous document's snapshot bytes, with the refs-only form and the
// read-back check falling out of the same pass.
//
// It takes values and returns values or errors: no storage, no database,
// no HTTP. Errors of Build are internal/fault errors (IllegalArgument for
// updates iceberg-go's builder refuses); the others are plain errors the
// caller maps.
package tablemeta
