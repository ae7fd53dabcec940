package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lakehold/catalog/service"
)

// setupMaintain implements `catalog maintain`: snapshot expiry and the
// clean-up of the files only the expired snapshots referenced, run against
// the database directly as the local operator. It prints the report as
// JSON.
func setupMaintain(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	c := newTableCmd(fs)
	olderThan := fs.String("expire-older-than", "", "expire snapshots committed before this: a duration back from now (72h) or an RFC 3339 time (default: the table's history.expire.max-snapshot-age-ms, else 5 days)")
	retain := fs.Int("retain-last", 0, "keep at least this many ancestors of each branch head (default: history.expire.min-snapshots-to-keep, else 1)")
	dry := fs.Bool("dry-run", false, "list what would be expired and deleted; change nothing")
	return func(args []string) error {
		id, err := tableIdent(e, args[0])
		if err != nil {
			return err
		}
		return maintain(c, id, *olderThan, *retain, *dry, e.stdout)
	}
}

func maintain(c *tableCmd, id service.Ident, olderThan string, retain int, dry bool, stdout io.Writer) error {
	opt := service.MaintainOptions{RetainLast: retain, DryRun: dry}
	if olderThan != "" {
		// Checked before connecting; dated after, by the database's clock
		// (this machine's may be off).
		if _, err := parseCutoff(olderThan, time.Now()); err != nil {
			return err
		}
	}
	ctx, svc, closeStore, err := c.open()
	if err != nil {
		return err
	}
	defer closeStore()
	if olderThan != "" {
		opt.ExpireOlderThan, _ = parseCutoff(olderThan, svc.Now())
	}
	rep, err := svc.Maintainer().Maintain(ctx, *c.warehouse, id, opt)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{ // the keys of the management route's answer
		"expired-snapshot-ids": rep.ExpiredSnapshots, "deleted-files": rep.DeletedFiles, "resumed-files": rep.ResumedFiles,
		"failed-files": rep.FailedFiles, "metadata-location": rep.MetadataLocation, "dry-run": rep.DryRun,
	})
}

// parseCutoff reads --expire-older-than: a duration back from now or an
// RFC 3339 time.
func parseCutoff(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--expire-older-than %q: a duration must not be negative", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--expire-older-than %q: want a duration (72h) or an RFC 3339 time", s)
	}
	return t, nil
}
