package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

const compactUsage = "usage: catalog compact NAMESPACE.TABLE --warehouse NAME [--dry-run] [storage flags]"

// cmdCompact implements `catalog compact`: it plans which base files of a
// v4 table carry too many column files or retired bytes, rewrites each in
// this process (no Spark needed) and commits it, run against the database
// directly as the local operator. It prints the report as JSON and fails
// when any picked base could not be folded.
func cmdCompact(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storageFlags
	sf.register(fs)
	warehouse := fs.String("warehouse", "default", "the table's warehouse")
	dry := fs.Bool("dry-run", false, "print the plan; write and commit nothing")
	secretKey := fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "base64 32-byte key sealing storage-profile secrets [CATALOG_SECRET_KEY]")
	var name string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 {
		return errors.New(compactUsage)
	}
	id := service.Ident{Namespace: strings.Split(name[:dot], "."), Name: name[dot+1:]}
	ctx := service.WithPrincipal(context.Background(), service.Principal{Source: service.SourceLocal, Subject: "cli"})
	st, err := openStore(ctx, sf, true)
	if err != nil {
		return err
	}
	defer st.Close()
	sealer, err := loadSealer(*secretKey, sf)
	if err != nil {
		return err
	}
	svc := service.New(st, storage.NewProvider(), service.Options{Sealer: sealer})
	rep, err := svc.Compact(ctx, *warehouse, id, service.CompactOptions{DryRun: *dry})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(compactJSON(rep, *dry)); err != nil {
		return err
	}
	for _, f := range rep.Folds {
		if f.Error != "" {
			return errors.New("some base files were not folded (see \"error\" in the report)")
		}
	}
	return nil
}

// compactJSON is the printed report: candidates and what became of each.
func compactJSON(rep *service.CompactionReport, dry bool) map[string]any {
	cands := []map[string]any{}
	for _, c := range rep.Plan.Candidates {
		cands = append(cands, map[string]any{"data-file": c.DataFile, "column-files": len(c.ColumnFiles),
			"retired-bytes": c.RetiredBytes, "retired-ratio": c.RetiredRatio, "reasons": c.Reasons})
	}
	folds := []map[string]any{}
	for _, f := range rep.Folds {
		m := map[string]any{"data-file": f.DataFile, "rows-before": f.RowsBefore, "bytes-before": f.BytesBefore}
		if f.Error != "" {
			m["error"] = f.Error
		} else {
			m["new-file"], m["rows-after"], m["bytes-after"] = f.NewFile, f.RowsAfter, f.BytesAfter
		}
		folds = append(folds, m)
	}
	return map[string]any{"max-column-files": rep.Plan.MaxFiles, "max-retired-ratio": rep.Plan.MaxRetiredRatio,
		"candidates": cands, "folds": folds, "dry-run": dry}
}
