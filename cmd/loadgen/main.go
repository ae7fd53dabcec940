// Command loadgen sends the same closed-loop Iceberg REST load to several
// catalogs in interleaved rounds and prints ops/s, p50/p99 latency and the
// ratio of each catalog to a reference one (see scripts/bench-peers.sh).
// With -cpu-ops and a cpu=PID option on the targets it also sends a fixed
// number of operations per scenario to each, interleaved, and prints the
// CPU time the targets' processes spent per operation (utime+stime from
// /proc, process trees included) with the reference's divided by each.
//
//	loadgen -target sqlite=http://127.0.0.1:8181,warehouse=bench,cpu=4242 \
//	        -target fixture=http://127.0.0.1:8182,cpu=4343 -ref fixture
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
	flag.Var(&targets, "target", "NAME=URI[,warehouse=W][,cpu=PID[+PID...]]; repeatable, in report column order (cpu: the process trees whose CPU time is the target's)")
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
	rate := flag.Bool("rate", true, "run the throughput phase (ops/s at each client count)")
	cpuOpsF := flag.String("cpu-ops", "", "CPU-per-operation phase: SCENARIO=N,... operations per round (empty: no such phase)")
	cpuRounds := flag.Int("cpu-rounds", 3, "rounds of the CPU phase (targets interleaved within each)")
	cpuClients := flag.Int("cpu-clients", 4, "clients sending the CPU phase's operations")
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
	cpuOps, err := parseOps(*cpuOpsF)
	if err != nil {
		return err
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
		ListTables: *listTables, Writers: max(slices.Max(clients), *cpuClients)}
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
	if *rate {
		rs := loadgen.Bench(ctx, loadgen.Config{Targets: targets, Scenarios: scs, Clients: clients,
			Duration: *duration, Rounds: *rounds, Warmup: *warmup, Log: os.Stderr})
		fmt.Printf("\n%d rounds x %s per scenario and target; big table: %d snapshots; ops/s is total ops over total time\n",
			*rounds, *duration, *snapshots)
		loadgen.Report(os.Stdout, rs, opts)
	}
	if len(cpuOps) > 0 && ctx.Err() == nil {
		crs := loadgen.BenchCPU(ctx, loadgen.CPUConfig{Targets: targets, Scenarios: loadgen.Scenarios(), Ops: cpuOps,
			Clients: *cpuClients, Rounds: *cpuRounds, ProcRoot: "/proc", Log: os.Stderr})
		fmt.Printf("\nCPU per operation: utime+stime of each target's process trees (/proc, %s ticks per process), "+
			"%d clients, %d rounds after a warm-up run; %s/X is how many times less CPU X needs\n",
			loadgen.ClockTick, *cpuClients, *cpuRounds, opts.Ref)
		loadgen.CPUReport(os.Stdout, crs, opts)
	}
	return ctx.Err()
}

// parseOps reads "SCENARIO=N,..."; it returns an error for an unknown
// scenario or a count that is not a positive integer.
func parseOps(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, v, _ := strings.Cut(part, "=")
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-cpu-ops %q: want SCENARIO=N with N > 0", part)
		}
		if _, err := loadgen.SelectScenarios([]string{name}); err != nil {
			return nil, fmt.Errorf("-cpu-ops: %w", err)
		}
		out[name] = n
	}
	return out, nil
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
