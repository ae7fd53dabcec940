package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergtable "github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/clients/go/stitch"
	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/scanplan"
	"github.com/lakehold/catalog/internal/storage"
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

--uri is required. --select names top-level columns (default: all of the
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
	fs.StringVar(&f.uri, "uri", "", "catalog base URI, e.g. http://127.0.0.1:8181 (required)")
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
		if f.out == "-" {
			return readTable(ctx, f, ns, table, e.stdout)
		}
		return writeAtomically(f.out, func(w io.Writer) error { return readTable(ctx, f, ns, table, w) })
	}
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
		return errors.New("read: --uri is required")
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

// readTable signs in, loads the table, plans and writes every task's rows.
func readTable(ctx context.Context, f readFlags, ns []string, table string, stdout io.Writer) error {
	c := &restClient{uri: strings.TrimRight(f.uri, "/"), token: f.token, hc: &http.Client{}}
	if f.credential != "" {
		if err := c.signIn(ctx, f.credential); err != nil {
			return err
		}
	}
	if err := c.configure(ctx, f.warehouse); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	base := c.tablePath(ns, table)
	var lt loadedTable
	if err := c.do(ctx, http.MethodGet, base, nil, nil, &lt); err != nil {
		return fmt.Errorf("load table: %w", err)
	}
	var snap *int64
	if f.snapshotID != 0 {
		snap = &f.snapshotID
	}
	sc, err := readSchema(lt.Metadata, snap)
	if err != nil {
		return err
	}
	cols, err := chooseColumns(sc, f.sel, f.filter, f.rowLineage)
	if err != nil {
		return err
	}
	req := planRequest{SnapshotID: snap, CaseSensitive: true, UseSnapshotSchema: snap != nil}
	if f.sel != "" {
		req.Select = cols.selectNames()
	}
	if f.filter != "" {
		req.Filter = json.RawMessage(f.filter)
	}
	tasks, err := c.plan(ctx, base, req)
	if err != nil {
		return err
	}
	out, err := newRowWriter(f.format, stdout, cols.outSchema)
	if err != nil {
		return err
	}
	nm, err := readNameMapping(lt.Metadata)
	if err != nil {
		return err
	}
	open := opener(&lt)
	for _, t := range tasks {
		t.NameMapping = nm
		if err := readTask(ctx, open, sc, cols, t, out); err != nil {
			return fmt.Errorf("read %s: %w", t.DataFile, err)
		}
	}
	return out.Close()
}

// readTask reads one planned file, drops the rows the filter does not
// match and writes the selected columns.
func readTask(ctx context.Context, open stitch.Opener, sc *iceberg.Schema, cols *readColumns, t stitch.Task, out rowWriter) error {
	rec, err := stitch.Read(ctx, open, sc, t, cols.readIDs)
	if err != nil {
		return err
	}
	rec, err = cols.apply(ctx, rec)
	if err != nil {
		return err
	}
	defer rec.Release()
	return out.Write(rec)
}

// opener opens planned files through internal/storage with the table's
// vended FileIO properties (the longest matching storage credential).
func opener(lt *loadedTable) stitch.Opener {
	p := storage.NewProvider(storage.WithS3ReadTimeout(30 * time.Second))
	return func(ctx context.Context, loc string) (stitch.File, error) {
		fio, err := p.For(ctx, loc, lt.fileProps(loc))
		if err != nil {
			return nil, err
		}
		return fio.Open(ctx, loc)
	}
}

// readNameMapping is the table's schema.name-mapping.default: files
// written without field ids are read through it (nil when unset).
func readNameMapping(raw json.RawMessage) (iceberg.NameMapping, error) {
	var md struct {
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, fmt.Errorf("load table: metadata: %w", err)
	}
	nm, err := parquetstats.ParseNameMapping(md.Properties[icebergtable.DefaultNameMappingKey])
	if err != nil {
		return nil, fmt.Errorf("load table: %w", err)
	}
	return nm, nil
}

// readSchema is the current schema of the metadata, or the schema of
// snapshot snap when given. It fails when the metadata names no such
// schema or snapshot.
func readSchema(raw json.RawMessage, snap *int64) (*iceberg.Schema, error) {
	var md struct {
		CurrentSchemaID int               `json:"current-schema-id"`
		Schemas         []json.RawMessage `json:"schemas"`
		Snapshots       []struct {
			SnapshotID int64 `json:"snapshot-id"`
			SchemaID   *int  `json:"schema-id"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, fmt.Errorf("load table: metadata: %w", err)
	}
	want := md.CurrentSchemaID
	if snap != nil {
		found := false
		for _, s := range md.Snapshots {
			if s.SnapshotID == *snap {
				found = true
				if s.SchemaID != nil {
					want = *s.SchemaID
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("the table has no snapshot %d", *snap)
		}
	}
	for _, r := range md.Schemas {
		var s iceberg.Schema
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, fmt.Errorf("load table: schema: %w", err)
		}
		if s.ID == want {
			return &s, nil
		}
	}
	return nil, fmt.Errorf("load table: the metadata has no schema %d", want)
}

// bindFilter binds the filter to sc (which must hold every field it
// names); nil for none.
func bindFilter(raw string, sc *iceberg.Schema) (*scanplan.Filter, error) {
	if raw == "" {
		return nil, nil
	}
	flt, err := scanplan.Bind(json.RawMessage(raw), sc, true)
	if err != nil {
		return nil, fmt.Errorf("read: --filter: %w", err)
	}
	if flt.AlwaysTrue() {
		return nil, nil
	}
	return flt, nil
}
