package fault

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// requireFault skips the test unless CATALOG_TEST_FAULT=1: it builds the
// binary, runs its own Postgres and takes tens of seconds.
func requireFault(t *testing.T) {
	t.Helper()
	if os.Getenv("CATALOG_TEST_FAULT") != "1" {
		t.Skip("fault test builds the catalog, runs its own Postgres cluster and takes ~30 s; set CATALOG_TEST_FAULT=1 (scripts/test.sh does)")
	}
}

// buildCatalog compiles ./cmd/catalog into dir and returns the binary path.
func buildCatalog(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("cannot find the module root (go env GOMOD): %v", err)
	}
	bin := filepath.Join(dir, "catalog")
	cmd := exec.Command("go", "build", "-tags", "faultknobs", "-o", bin, "./cmd/catalog")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/catalog: %v\n%s", err, b)
	}
	return bin
}

// freePort returns a port on 127.0.0.1 below the kernel's ephemeral range
// (so that no outgoing connection holds it) that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	for range 200 {
		p := 26000 + rand.IntN(6000)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port on 127.0.0.1 in 26000-31999")
	return 0
}

// cleanEnv is the test's environment without CATALOG_* variables, so that
// a developer's settings cannot change what the replicas do.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CATALOG_") {
			env = append(env, kv)
		}
	}
	return env
}

// child is a process the test started. Pdeathsig kills it should the test
// binary die without running its cleanups (a go test timeout).
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startChild(name string, args []string, logPath string, cred *syscall.Credential, env ...string) (*child, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(name, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.done) }()
	return c, nil
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// signal sends sig and waits up to wait for the exit, then SIGKILLs.
func (c *child) signal(sig syscall.Signal, wait time.Duration) {
	if c == nil || c.exited() {
		return
	}
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(wait):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// tail returns the last n lines of a log file, for failure reports.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// postgres is a throwaway cluster with durable settings (fsync and
// synchronous_commit on), so that an immediate shutdown loses nothing that
// was acknowledged. The postmaster is the test's own child process.
type postgres struct {
	bin, root, data, log string
	port                 int
	cred                 *syscall.Credential
	proc                 *child
	// settings are extra server settings, name=value, passed as -c.
	settings []string
	name     string // names the cluster in failure reports
}

// findPGBin returns the newest /usr/lib/postgresql/*/bin with initdb,
// waiting a while for a package install in progress. The test fails (not
// skips) without one: CATALOG_TEST_FAULT=1 asked for this test.
func findPGBin(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		var ok []string
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
				if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
					ok = append(ok, d)
				}
			}
		}
		if len(ok) > 0 {
			sort.Slice(ok, func(i, j int) bool { return pgMajor(ok[i]) < pgMajor(ok[j]) })
			return ok[len(ok)-1]
		}
		if time.Now().After(deadline) {
			t.Fatal("no PostgreSQL server under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
		}
		time.Sleep(2 * time.Second)
	}
}

func pgMajor(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// startPostgres runs initdb in a fresh directory and starts the server on
// a free port with the given extra settings (name=value); as root the
// cluster belongs to the postgres user. Cleanup stops it and removes the
// directory.
func startPostgres(t *testing.T, settings ...string) *postgres {
	t.Helper()
	p := newPostgresDir(t, "cluster")
	p.settings = settings
	p.initdb(t)
	p.listen(t)
	return p
}

// initdb creates the cluster's data directory.
func (p *postgres) initdb(t *testing.T) {
	t.Helper()
	if out, err := p.tool("initdb", "-D", p.data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
}

// startPostgresCopy is startPostgres with a copy of tmpl's data directory
// (made by initdb, never started) instead of a fresh initdb, which costs
// seconds on a loaded machine.
func startPostgresCopy(t *testing.T, tmpl *postgres, settings ...string) *postgres {
	t.Helper()
	p := newPostgresDir(t, "cluster")
	p.settings = settings
	if out, err := exec.Command("cp", "-a", tmpl.data, p.data).CombinedOutput(); err != nil {
		t.Fatalf("copy the template cluster: %v\n%s", err, out)
	}
	p.listen(t)
	return p
}

// newPostgresDir makes the directory of a cluster that does not exist yet
// (owned by the postgres user when running as root) and registers the
// cleanup that stops its server and removes it. name tells clusters apart
// in failure reports ("primary", "standby").
func newPostgresDir(t *testing.T, name string) *postgres {
	t.Helper()
	p := &postgres{bin: findPGBin(t), name: name}
	root, err := os.MkdirTemp("", "catalog-fault-pg.")
	if err != nil {
		t.Fatal(err)
	}
	p.root, p.data, p.log = root, filepath.Join(root, "data"), filepath.Join(root, "server.log")
	t.Cleanup(func() {
		p.proc.signal(syscall.SIGQUIT, 10*time.Second)
		if t.Failed() {
			t.Logf("postgres %s log tail:\n%s", p.name, tail(p.log, 30))
		}
		os.RemoveAll(root)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(root, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// tool is a command of the server's bin directory (initdb, pg_ctl, ...)
// run as the cluster's owner.
func (p *postgres) tool(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	cmd.Env = cleanEnv()
	return cmd
}

// listen starts the server on a free port, trying another port a few
// times when the start fails (the port was taken meanwhile).
func (p *postgres) listen(t *testing.T) {
	t.Helper()
	for try := 0; ; try++ {
		p.port = freePort(t)
		err := p.start()
		if err == nil {
			return
		}
		if try == 4 {
			t.Fatalf("start postgres: %v\n%s", err, tail(p.log, 20))
		}
	}
}

// url is the libpq URL of the cluster's postgres database.
func (p *postgres) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", p.port)
}

// start runs the postmaster and waits until it accepts queries. Returns an
// error when it exits (e.g. the port was taken) or is not ready in 60 s.
func (p *postgres) start() error {
	args := []string{"-D", p.data, "-p", strconv.Itoa(p.port), "-k", p.root,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100",
		"-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "full_page_writes=on"}
	for _, kv := range p.settings {
		args = append(args, "-c", kv)
	}
	proc, err := startChild(filepath.Join(p.bin, "postgres"), args, p.log, p.cred)
	if err != nil {
		return err
	}
	p.proc = proc
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if proc.exited() {
			return errors.New("postgres exited during start")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, p.url())
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	proc.signal(syscall.SIGQUIT, 5*time.Second)
	return errors.New("postgres not ready after 60 s")
}

// stopImmediate is `pg_ctl stop -m immediate`: every backend dies at once
// without a checkpoint, as in a crash; the next start runs WAL recovery.
func (p *postgres) stopImmediate() error {
	if out, err := p.tool("pg_ctl", "stop", "-D", p.data, "-m", "immediate", "-w", "-t", "30").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop -m immediate: %v: %s", err, out)
	}
	select {
	case <-p.proc.done:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("postmaster still running 30 s after pg_ctl stop")
	}
}

// replica is one `catalog serve` process; it can be killed and restarted
// on the same address.
type replica struct {
	idx       int
	bin, addr string
	args      []string
	env       []string // CATALOG_* settings beyond the flags
	probe     string   // the path answering 200 once started; default /readyz
	logDir    string
	starts    int
	proc      *child
}

// startReplica starts replica idx (retrying on another port if the first
// one was taken meanwhile) and registers its cleanup. warehouse is the
// location of warehouse "lake": a local directory, or a URI (s3://...).
func startReplica(t *testing.T, idx int, bin, dbURL, warehouse, logDir string, migrate bool, extra ...string) *replica {
	t.Helper()
	return startReplicaAs(t, &replica{idx: idx, bin: bin, logDir: logDir}, dbURL, warehouse, migrate, extra...)
}

// startReplicaAs is startReplica for r, which may carry env and probe.
func startReplicaAs(t *testing.T, r *replica, dbURL, warehouse string, migrate bool, extra ...string) *replica {
	t.Helper()
	idx := r.idx
	if !strings.Contains(warehouse, "://") {
		warehouse = "file://" + warehouse
	}
	t.Cleanup(func() {
		r.proc.signal(syscall.SIGKILL, 5*time.Second)
		if t.Failed() {
			t.Logf("replica %d log tail:\n%s", idx, tail(r.logPath(), 20))
		}
	})
	for try := 0; ; try++ {
		r.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		r.args = []string{"serve", "--database-url", dbURL, "--listen", r.addr,
			"--warehouse", "lake=" + warehouse, "--migrate=" + strconv.FormatBool(migrate), "--log-level", "warn"}
		r.args = append(r.args, extra...)
		err := r.start()
		if err == nil {
			return r
		}
		if try == 3 {
			t.Fatalf("start replica %d: %v\n%s", idx, err, tail(r.logPath(), 20))
		}
	}
}

func (r *replica) logPath() string {
	return filepath.Join(r.logDir, fmt.Sprintf("replica%d.log", r.idx))
}

// start runs the binary and waits for /readyz (or r.probe). Returns an error when the
// process exits or is not ready within 30 s.
func (r *replica) start() error {
	r.starts++
	proc, err := startChild(r.bin, r.args, r.logPath(), nil, r.env...)
	if err != nil {
		return err
	}
	r.proc = proc
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if proc.exited() {
			return fmt.Errorf("replica %d exited during start", r.idx)
		}
		probe := r.probe
		if probe == "" {
			probe = "/readyz"
		}
		resp, err := client.Get("http://" + r.addr + probe)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	proc.signal(syscall.SIGKILL, 5*time.Second)
	return fmt.Errorf("replica %d not ready after 30 s", r.idx)
}

// kill is kill -9: in-flight requests die with their connections.
func (r *replica) kill() { r.proc.signal(syscall.SIGKILL, 5*time.Second) }
