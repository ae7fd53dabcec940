package tableaccess

import (
	"context"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/validation"
)

// Format 4 table metadata breaks every client that models versions 1–3
// only (PyIceberg ≤ 0.12 fails in its pydantic model, iceberg-java 1.x and
// DuckDB fail on the missing manifest-list, iceberg-go refuses the
// version). So a v4 answer goes only to a client that said it reads v4;
// any other gets one documented 400 before anything is created or
// committed (docs/column-files.md, "Who can read a v4 table").

// formatV4 is the table format version with column files.
const formatV4 = 4

// ColumnFilesHeader is the request header by which a client says it reads
// format version 4 metadata and column files ("true").
const ColumnFilesHeader = "X-Iceberg-Column-Files"

type v4ReaderKey struct{}

// WithV4Reader records on ctx whether the client of this request reads
// format version 4 (sent ColumnFilesHeader: true). The HTTP layer sets it
// on every request; a context without it is an in-process caller (the
// catalog CLI, tests), which is this module's own code and reads v4.
func WithV4Reader(ctx context.Context, reads bool) context.Context {
	return context.WithValue(ctx, v4ReaderKey{}, reads)
}

// ReadsV4 reports whether the caller of ctx reads format version 4.
func ReadsV4(ctx context.Context) bool {
	reads, set := ctx.Value(v4ReaderKey{}).(bool)
	return !set || reads
}

// V4ClientHint is the part of the refusal that says what to use instead;
// it is documented in docs/column-files.md.
const V4ClientHint = "Read it with the lakehold Python library (pip install ./clients/python), with server-side planning " +
	"(POST .../plan), or with any client that sends the header " + ColumnFilesHeader + ": true; " +
	"see docs/column-files.md, \"Who can read a v4 table\""

// GuardV4 returns nil when the caller reads format version 4 or version
// is below 4, else the 400 BadRequestException (reason
// format-version-4-unsupported-by-client) that doing what names would
// answer the caller with v4 metadata it cannot parse.
func GuardV4(ctx context.Context, version int, what string) error {
	if version < formatV4 || ReadsV4(ctx) {
		return nil
	}
	e := fault.New(fault.BadRequest, "%s: it is a format version 4 table, which this client did not say it reads "+
		"(PyIceberg 0.12, iceberg-java 1.x engines, DuckDB and iceberg-go cannot parse v4 metadata). %s", what, V4ClientHint)
	e.Reason = validation.ReasonV4UnsupportedByClient
	return e
}
