package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/service"
)

// setupCompact implements `catalog compact`: it plans which base files of
// a v4 table carry too many column files or retired bytes, rewrites each in
// this process (no Spark needed) and commits it, run against the database
// directly as the local operator. It prints the report as JSON and fails
// when any picked base could not be folded.
func setupCompact(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	c := newTableCmd(fs)
	dry := fs.Bool("dry-run", false, "print the plan; write and commit nothing")
	all := fs.Bool("all", false, "fold every base file that has column files, whatever the table's thresholds (before an export)")
	return func(args []string) error {
		id, err := tableIdent(e, args[0])
		if err != nil {
			return err
		}
		opt := service.CompactOptions{DryRun: *dry}
		if *all {
			th := compact.FoldAll(false)
			opt.Thresholds = &th
		}
		return runCompact(c, id, opt, e.stdout)
	}
}

func runCompact(c *tableCmd, id service.Ident, opt service.CompactOptions, stdout io.Writer) error {
	dry := opt.DryRun
	ctx, svc, closeStore, err := c.open()
	if err != nil {
		return err
	}
	defer closeStore()
	rep, err := svc.V4Commits().Compact(ctx, *c.warehouse, id, opt)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(compactJSON(rep, dry)); err != nil {
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
