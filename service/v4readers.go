package service

import (
	"github.com/lakehold/catalog/service/tableaccess"
)

// Format 4 table metadata breaks every client that models versions 1–3
// only (PyIceberg ≤ 0.12 fails in its pydantic model, iceberg-java 1.x and
// DuckDB fail on the missing manifest-list, iceberg-go refuses the
// version). So a v4 answer goes only to a client that said it reads v4;
// any other gets one documented 400 before anything is created or
// committed (docs/column-files.md, "Who can read a v4 table").

// ColumnFilesHeader is the request header by which a client says it reads
// format version 4 metadata and column files (tableaccess.ColumnFilesHeader).
const ColumnFilesHeader = tableaccess.ColumnFilesHeader

// V4UpgradeWarning is the Warning (RFC 9111 warn-text) of a commit that
// upgrades a table to format version 4: what the upgrade costs. It holds
// no double quote, so it goes in a quoted-string as is.
const V4UpgradeWarning = "The table is now format version 4, for good (there is no downgrade): PyIceberg, " +
	"Spark, Trino and Flink on iceberg-java 1.x, DuckDB and iceberg-go no longer read it; the lakehold " +
	"Python library and server-side planning with " + ColumnFilesHeader + ": true do. See docs/column-files.md, section Upgrading to v4"
