// Package restread reads a table the way any remote client does, through
// the catalog's REST API: it signs in, loads the table, plans the scan
// (following plan tasks) with X-Iceberg-Column-Files and vended
// credentials, opens every planned file with the table's vended storage
// config, stitches column files and deletion vectors (clients/go/stitch)
// and writes the rows as Arrow IPC, Parquet, JSON lines or CSV. It is the
// engine of `catalog read` and knows nothing of the catalog's server side.
package restread

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/apache/iceberg-go"
	icebergtable "github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/scanplan"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/internal/storage"
)

// Options say what to read and how to reach the catalog.
type Options struct {
	// URI is the catalog's base URI; Warehouse is sent to /v1/config
	// ("" for the catalog's default).
	URI, Warehouse string
	// Credential is CLIENT_ID:SECRET traded for a token at
	// /v1/oauth/tokens; Token is a bearer token sent as is.
	Credential, Token string
	// Select names top-level columns ("" for all); Filter is an Iceberg
	// expression in REST JSON ("" for none).
	Select, Filter string
	// Format is arrow, parquet, jsonl or csv.
	Format string
	// SnapshotID reads that snapshot and its schema (0: the current one).
	SnapshotID int64
	// RowLineage adds _row_id and _last_updated_sequence_number.
	RowLineage bool
}

// Read signs in, loads table ns.table, plans the scan o describes and
// writes every planned file's rows to w in o.Format. It returns the
// catalog's error (with its message) when a request is refused, an error
// naming the file when one cannot be read, and errEqualityDeletes when the
// plan has equality deletes.
func Read(ctx context.Context, o Options, ns []string, table string, w io.Writer) error {
	c := newRESTClient(o.URI, o.Token)
	if o.Credential != "" {
		if err := c.SignIn(ctx, "", o.Credential, ""); err != nil {
			return err
		}
	}
	if err := c.Configure(ctx, o.Warehouse); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	base := c.tablePath(ns, table)
	var lt loadedTable
	if err := c.Do(ctx, http.MethodGet, base, nil, nil, &lt); err != nil {
		return fmt.Errorf("load table: %w", err)
	}
	var snap *int64
	if o.SnapshotID != 0 {
		snap = &o.SnapshotID
	}
	sc, err := readSchema(lt.Metadata, snap)
	if err != nil {
		return err
	}
	cols, err := chooseColumns(sc, o.Select, o.Filter, o.RowLineage)
	if err != nil {
		return err
	}
	req := planRequest{SnapshotID: snap, CaseSensitive: true, UseSnapshotSchema: snap != nil}
	if o.Select != "" {
		req.Select = cols.selectNames()
	}
	if o.Filter != "" {
		req.Filter = json.RawMessage(o.Filter)
	}
	tasks, err := c.plan(ctx, base, req)
	if err != nil {
		return err
	}
	out, err := newRowWriter(o.Format, w, cols.outSchema)
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
