package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/lakehold/catalog/internal/restread"
)

// readAbout is the help text of `catalog read`.
const readAbout = `Reads a table through the catalog's REST API, as any remote client would:
it plans the scan (POST .../plan, then .../tasks for plan tasks) with
X-Iceberg-Column-Files: true and X-Iceberg-Access-Delegation:
vended-credentials on every request, reads each planned file with its
column files and deletion vector (package clients/go/stitch), opens files
with the table's vended storage config (file://, s3://, gs://, abfss://)
and writes the rows to stdout, or to the file --out names:

  arrow    an Arrow IPC stream (one schema, field ids in the field metadata)
  parquet  one Parquet file (zstd; the field ids in the Parquet schema)
  jsonl    one JSON object per row
  csv      a header line, then one line per row (top-level primitive columns)

--out FILE writes the rows to FILE instead of stdout: to a temporary file
beside it, renamed to FILE once every row is written, so a read that fails
leaves no FILE behind. A FILE ending in .parquet makes parquet the default
format.

--uri defaults to $CATALOG_URI, else to the address a local "catalog
serve" listens on ($CATALOG_LISTEN, else 127.0.0.1:8181): the embedded
default needs no flag. --select names top-level columns (default: all of the
schema's). --filter is an Iceberg expression in REST JSON; the plan prunes
files with it and the reader drops the rows it does not match.
--row-lineage adds _row_id and _last_updated_sequence_number as the last
two columns. Equality deletes are refused (the plan says which tasks they
apply to, but stitch does not apply them).`

// readFlags are the options of `catalog read`.
type readFlags struct {
	uri, warehouse, credential, token string
	sel, filter, format, out          string
	snapshotID                        int64
	rowLineage                        bool
	timeout                           time.Duration
}

func setupRead(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	var f readFlags
	fs.StringVar(&f.uri, "uri", localCatalogURI(), "catalog base URI (default: the local catalog serve's address) [CATALOG_URI]")
	fs.StringVar(&f.warehouse, "warehouse", "", "warehouse name sent to /v1/config (default: the catalog's default warehouse)")
	fs.StringVar(&f.credential, "credential", "", "CLIENT_ID:SECRET of a principal, traded for a token at /v1/oauth/tokens")
	fs.StringVar(&f.token, "token", "", "bearer token to send as is")
	fs.StringVar(&f.sel, "select", "", "comma-separated top-level column names (default: all)")
	fs.StringVar(&f.filter, "filter", "", "row filter: an Iceberg expression as REST JSON")
	fs.Int64Var(&f.snapshotID, "snapshot-id", 0, "read this snapshot instead of the current one (its schema too)")
	fs.Int64Var(&f.snapshotID, "snapshot", 0, "the same as --snapshot-id")
	fs.BoolVar(&f.rowLineage, "row-lineage", false, "add the _row_id and _last_updated_sequence_number columns")
	fs.StringVar(&f.format, "format", "", "output: csv, jsonl, arrow or parquet (default: parquet for an --out ending in .parquet, else jsonl)")
	fs.StringVar(&f.out, "out", "-", "write to this file instead of stdout (-)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "give up after this long")
	return func(args []string) error {
		ns, table, err := splitTableName(args[0])
		if err == nil {
			err = f.check()
		}
		if err != nil {
			return e.usagef("%s", strings.TrimPrefix(err.Error(), "read: "))
		}
		ctx, cancel := signalContext()
		defer cancel()
		ctx, cancelT := context.WithTimeout(ctx, f.timeout)
		defer cancelT()
		o := restread.Options{URI: f.uri, Warehouse: f.warehouse, Credential: f.credential, Token: f.token,
			Select: f.sel, Filter: f.filter, Format: f.format, SnapshotID: f.snapshotID, RowLineage: f.rowLineage}
		if f.out == "-" {
			return restread.Read(ctx, o, ns, table, e.stdout)
		}
		return restread.WriteAtomically(f.out, func(w io.Writer) error { return restread.Read(ctx, o, ns, table, w) })
	}
}

// localCatalogURI is the default of `read --uri`: $CATALOG_URI, else the
// address `catalog serve` listens on by default ($CATALOG_LISTEN, else
// 127.0.0.1:8181), a wildcard host read as the loopback one.
func localCatalogURI() string {
	if v := os.Getenv("CATALOG_URI"); v != "" {
		return v
	}
	host, port, err := net.SplitHostPort(envOr("CATALOG_LISTEN", "127.0.0.1:8181"))
	if err != nil {
		return "http://127.0.0.1:8181"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func (f *readFlags) check() error {
	if f.format == "" {
		f.format = "jsonl"
		if strings.HasSuffix(f.out, ".parquet") {
			f.format = "parquet"
		}
	}
	switch {
	case f.uri == "":
		return errors.New("read: --uri is empty")
	case f.credential != "" && f.token != "":
		return errors.New("read: give --credential or --token, not both")
	case f.format != "csv" && f.format != "jsonl" && f.format != "arrow" && f.format != "parquet":
		return fmt.Errorf("read: --format %q: want csv, jsonl, arrow or parquet", f.format)
	case f.out == "":
		return errors.New("read: --out needs a file name (or - for stdout)")
	case f.filter != "" && !json.Valid([]byte(f.filter)):
		return errors.New("read: --filter is not valid JSON")
	}
	return nil
}

// splitTableName splits NAMESPACE.TABLE at its last dot (the namespace
// may have several levels: a.b.table).
func splitTableName(s string) ([]string, string, error) {
	i := strings.LastIndex(s, ".")
	if i <= 0 || i == len(s)-1 {
		return nil, "", fmt.Errorf("read: %q: want NAMESPACE.TABLE", s)
	}
	return strings.Split(s[:i], "."), s[i+1:], nil
}
