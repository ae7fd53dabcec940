// Command loadgen sends the same closed-loop Iceberg REST load to several
// catalogs in interleaved rounds and prints ops/s, p50/p99 latency and the
// ratio of each catalog to a reference one (see scripts/bench-peers.sh).
//
//	loadgen -target sqlite=http://127.0.0.1:8181,warehouse=bench \
//	        -target fixture=http://127.0.0.1:8182 -ref fixture
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakehold/catalog/internal/loadgen"
)

type targetsFlag []*loadgen.Target

func (f *targetsFlag) String() string { return fmt.Sprint(len(*f)) }
func (f *targetsFlag) Set(s string) error {
	t, err := loadgen.ParseTarget(s)
	if err == nil {
		*f = append(*f, t)
	}
	return err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var targets targetsFlag
	flag.Var(&targets, "target", "NAME=URI[,warehouse=W]; repeatable, in report column order")
	ref := flag.String("ref", "", "target the others are divided by (default: the last -target)")
	clientsF := flag.String("clients", "8,16", "client counts, comma-separated")
	duration := flag.Duration("duration", 2*time.Second, "length of one scenario on one target in one round")
	rounds := flag.Int("rounds", 3, "rounds per scenario (targets interleaved within each)")
	warmup := flag.Duration("warmup", time.Second, "unmeasured load per scenario and target before the rounds")
	scenariosF := flag.String("scenarios", "", "comma-separated subset of: "+names())
	snapshots := flag.Int("snapshots", 10000, "snapshots in the big table")
	batch := flag.Int("snapshot-batch", 500, "add-snapshot updates per commit while building the big table")
	listTables := flag.Int("list-tables", 100, "tables in the namespace the list scenario lists")
	gzip := flag.Bool("gzip", false, "send Accept-Encoding: gzip (servers that compress then do so)")
	ceilingsF := flag.String("ceilings", "", "pgbench rates: select@8=TPS,update@8=TPS,...")
	ceilingFor := flag.String("ceiling-for", "", "targets that get a % of ceiling column, comma-separated")
	afterSetup := flag.String("after-setup", "", "shell command run once after every target is set up, before the first measurement (e.g. a VACUUM, as pgbench runs one)")
	ns := flag.String("namespace", "lg"+strconv.FormatInt(time.Now().Unix(), 36), "namespace the tables are built in")
	flag.Parse()

	if len(targets) == 0 {
		return fmt.Errorf("no -target given")
	}
	clients, err := ints(*clientsF)
	if err != nil {
		return err
	}
	scs := loadgen.Scenarios()
	if *scenariosF != "" {
		if scs, err = loadgen.SelectScenarios(strings.Split(*scenariosF, ",")); err != nil {
			return err
		}
	}
	ceilings, err := loadgen.ParseCeilings(*ceilingsF)
	if err != nil {
		return err
	}
	opts := loadgen.ReportOptions{Ref: *ref, Ceilings: ceilings}
	for _, t := range targets {
		opts.Targets = append(opts.Targets, t.Name)
	}
	if opts.Ref == "" {
		opts.Ref = opts.Targets[len(opts.Targets)-1]
	}
	if !slices.Contains(opts.Targets, opts.Ref) {
		return fmt.Errorf("-ref %q is not a target", opts.Ref)
	}
	if *ceilingFor != "" {
		opts.CeilingFor = strings.Split(*ceilingFor, ",")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	setup := loadgen.SetupOptions{Namespace: *ns, Snapshots: *snapshots, Batch: max(1, *batch),
		ListTables: *listTables, Writers: slices.Max(clients)}
	for _, t := range targets {
		start := time.Now()
		if err := t.Connect(ctx, slices.Max(clients), *gzip); err != nil {
			return err
		}
		if err := t.Setup(ctx, setup); err != nil {
			return fmt.Errorf("%s: setup: %w", t.Name, err)
		}
		fmt.Fprintf(os.Stderr, "setup %s: %s\n", t.Name, time.Since(start).Round(time.Millisecond))
	}
	if *afterSetup != "" {
		// Building the big table leaves the database work to do (dead
		// row versions of its many rewrites); doing it now keeps it out
		// of the first scenario's numbers.
		cmd := exec.CommandContext(ctx, "sh", "-c", *afterSetup)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("after-setup command: %w", err)
		}
	}
	rs := loadgen.Bench(ctx, loadgen.Config{Targets: targets, Scenarios: scs, Clients: clients,
		Duration: *duration, Rounds: *rounds, Warmup: *warmup, Log: os.Stderr})
	fmt.Printf("\n%d rounds x %s per scenario and target; big table: %d snapshots; ops/s is total ops over total time\n",
		*rounds, *duration, *snapshots)
	loadgen.Report(os.Stdout, rs, opts)
	return ctx.Err()
}

func names() string {
	var n []string
	for _, s := range loadgen.Scenarios() {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

func ints(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("client count %q: want a positive integer", p)
		}
		out = append(out, n)
	}
	return out, nil
}
