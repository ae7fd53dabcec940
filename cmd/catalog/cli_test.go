package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// allCommands is every command of the table, groups included, root first.
func allCommands(c *command) []*command {
	out := []*command{c}
	for _, s := range c.subs {
		out = append(out, allCommands(s)...)
	}
	return out
}

// words are the arguments that name c: ["warehouse", "create"].
func words(c *command) []string {
	if c.parent == nil {
		return nil
	}
	return append(words(c.parent), c.name)
}

var flagLine = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)

// TestEveryCommandHelp walks the command table, so that no command can be
// added without it: --help, -h and 'catalog help ...' exit 0 and print
// "Usage:" with the command's name; a command's help lists exactly the
// flags its FlagSet parses, each accepted by it and with at most one
// default; every command has one or two examples, and each parses.
func TestEveryCommandHelp(t *testing.T) {
	for _, c := range allCommands(rootCommand) {
		t.Run(c.path(), func(t *testing.T) {
			var texts []string
			for _, args := range [][]string{
				append(words(c), "--help"), append(words(c), "-h"), append([]string{"help"}, words(c)...),
			} {
				var out, errb bytes.Buffer
				err := run(args, &out, &errb)
				require.NoError(t, err, "%v", args)
				require.Zero(t, exitCode(err))
				require.Empty(t, errb.String(), "%v: help goes to stdout", args)
				require.Contains(t, out.String(), "Usage:\n  "+c.path(), "%v", args)
				texts = append(texts, out.String())
			}
			require.Equal(t, texts[0], texts[1], "-h is --help")
			require.Equal(t, texts[0], texts[2], "'catalog help %s' is --help", strings.Join(words(c), " "))
			help := texts[0]
			if c.subs != nil {
				for _, l := range c.leaves() {
					require.Contains(t, help, strings.TrimPrefix(l.path(), c.path()+" "), "a group lists its commands")
				}
				return
			}
			if c.args != "" {
				require.Contains(t, help, c.usageLine(), "the usage shows the arguments")
				require.True(t, strings.HasSuffix(c.usageLine(), " "+c.args))
			}
			parsed, _ := flagNames(c)
			var listed []string
			for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
				listed = append(listed, "--"+m[1])
			}
			if len(parsed) == 0 {
				require.NotContains(t, help, "Flags:")
			}
			require.ElementsMatch(t, parsed, listed, "help lists exactly the flags the command parses")
			fs, _ := c.flagSet(io.Discard, io.Discard)
			for _, f := range listed {
				fl := fs.Lookup(strings.TrimPrefix(f, "--"))
				args := append(words(c), f+"="+fl.DefValue, "--help")
				require.NoError(t, run(args, io.Discard, io.Discard), "%v: the command accepts the flag it lists", args)
				block := flagBlock(help, f)
				require.LessOrEqual(t, strings.Count(block, "(default"), 1, "%s shows one default:\n%s", f, block)
			}
			require.NotEmpty(t, c.summary)
			require.True(t, len(c.examples) >= 1 && len(c.examples) <= 2, "one or two examples, not %d", len(c.examples))
			for _, ex := range c.examples {
				require.Contains(t, help, "  catalog "+ex)
				args := shellWords(ex)
				var out bytes.Buffer
				require.NoError(t, run(append(args, "--help"), &out, io.Discard), "example %q does not parse", ex)
			}
		})
	}
}

// flagBlock is the part of help that documents flag f.
func flagBlock(help, f string) string {
	i := strings.Index(help, "\n  "+f+"\n")
	if i < 0 {
		i = strings.Index(help, "\n  "+f+" ")
	}
	if i < 0 {
		return ""
	}
	rest := help[i+1:]
	if j := strings.Index(rest[2:], "\n  --"); j >= 0 {
		rest = rest[:j+2]
	}
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// shellWords splits an example command line as the shell would, enough
// for the examples: quotes, and nothing from a redirection on.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == ' ':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '>' && !inWord:
			return out
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// TestHelpRegressions: the findings of issue 29, one by one.
func TestHelpRegressions(t *testing.T) {
	help := func(args ...string) string {
		var out bytes.Buffer
		require.NoError(t, run(args, &out, io.Discard), "%v", args)
		return out.String()
	}
	list := help("warehouse", "list", "--help")
	for _, f := range []string{"--location", "--profile", "--secret-key"} {
		require.NotContains(t, list, f, "warehouse list takes no %s", f)
	}
	require.Contains(t, help("warehouse", "create", "--help"), "--location")
	require.NotContains(t, help("warehouse", "create", "--help"), "--profile")
	require.Contains(t, help("warehouse", "set-profile", "--help"), "--secret-key")
	require.Contains(t, help("maintain", "--help"), "catalog maintain [flags] NAMESPACE.TABLE")
	serve := help("help", "serve")
	require.Contains(t, serve, "Usage:\n  catalog serve [flags]", "help serve is the serve help, not the general one")
	require.Contains(t, flagBlock(serve, "--max-header-bytes"), "(default 64KiB)")
	require.Equal(t, 1, strings.Count(flagBlock(serve, "--max-header-bytes"), "default"))
	require.Contains(t, flagBlock(serve, "--max-request-body"), "(default 8MiB)")
	require.Contains(t, flagBlock(serve, "--log-level"), "CATALOG_LOG_LEVEL")
	require.NotContains(t, help("role", "list", "--help"), "--on")
	require.Contains(t, help("role", "grant", "--help"), "--on")
	require.NotContains(t, help("role", "grant", "--help"), "--description")

	t.Setenv("CATALOG_DATABASE_URL", "postgres://catalog:hunter2@db/catalog")
	t.Setenv("CATALOG_SECRET_KEY", "c2VjcmV0LWtleS1ieXRlcy1zZWNyZXQta2V5LWJ5dGVzIQ==")
	serve = help("serve", "--help")
	require.NotContains(t, serve, "hunter2", "help never prints a database URL from the environment")
	require.NotContains(t, serve, "c2VjcmV0", "nor the secret key")
	require.Contains(t, strings.Join(strings.Fields(flagBlock(serve, "--database-url")), " "), "(default: set from the environment)")
}

// TestUsageErrors: a mistake in the command line exits 2 with one line
// naming the command and where its help is; help exits 0; a failure of
// the command itself exits 1.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `catalog: unknown command "frobnicate"; commands: serve, worker, migrate,`},
		{[]string{"serve", "--bogus"}, "catalog serve: flag provided but not defined: -bogus (see 'catalog serve --help')"},
		{[]string{"serve", "--max-request-body", "lots"}, `catalog serve: invalid value "lots" for flag -max-request-body`},
		{[]string{"serve", "extra"}, `catalog serve: unexpected argument "extra"`},
		{[]string{"warehouse"}, "catalog warehouse: missing command: create, set-profile, list"},
		{[]string{"warehouse", "--help-me"}, "catalog warehouse: flag --help-me before the command"},
		{[]string{"warehouse", "frob"}, `catalog warehouse: unknown warehouse command "frob"`},
		{[]string{"warehouse", "create", "--data-dir", dir}, "catalog warehouse create: missing NAME; usage: catalog warehouse create [flags] NAME"},
		{[]string{"warehouse", "create", "lake", "--data-dir", dir}, "catalog warehouse create: --location is required"},
		{[]string{"warehouse", "list", "--location", "x"}, "catalog warehouse list: flag provided but not defined: -location"},
		{[]string{"maintain"}, "catalog maintain: missing NAMESPACE.TABLE; usage: catalog maintain [flags] NAMESPACE.TABLE"},
		{[]string{"maintain", "nodot"}, `catalog maintain: "nodot": want NAMESPACE.TABLE`},
		{[]string{"role", "grant", "eng", "x"}, "catalog role grant: --on is required"},
		{[]string{"role", "list", "--on", "server"}, "flag provided but not defined: -on"},
		{[]string{"help", "nope"}, `catalog help: unknown command "nope" (see 'catalog help')`},
		{[]string{"completion", "zsh"}, `catalog completion: shell "zsh": only bash is supported`},
		{[]string{"read", "--uri", "", "ns.t"}, "catalog read: --uri is empty"},
	} {
		var out, errb bytes.Buffer
		err := run(tc.args, &out, &errb)
		require.Error(t, err, "%v", tc.args)
		require.Equal(t, 2, exitCode(err), "%v: %v", tc.args, err)
		require.Contains(t, err.Error(), tc.want, "%v", tc.args)
		require.NotContains(t, err.Error(), "\n", "%v: one line", tc.args)
		require.Regexp(t, `\(see 'catalog[a-z -]*'\)$`, err.Error(), "%v: a hint", tc.args)
		require.Empty(t, out.String(), "%v", tc.args)
		require.Empty(t, errb.String(), "%v: the flag package prints nothing", tc.args)
	}
	var errb bytes.Buffer
	err := run(nil, io.Discard, &errb)
	require.Equal(t, 2, exitCode(err))
	require.Contains(t, errb.String(), "Usage:", "no command: the general help, on stderr")

	err = run([]string{"maintain", "ns.t", "--warehouse", "nope", "--data-dir", t.TempDir()}, io.Discard, io.Discard)
	require.Error(t, err)
	require.Equal(t, 1, exitCode(err), "a failure of the command itself: %v", err)
	require.Zero(t, exitCode(nil))
}

// TestUsageErrorExitStatus runs the binary: status 2 and the one line on
// stderr for a usage error, 0 and stdout for help.
func TestUsageErrorExitStatus(t *testing.T) {
	cmd := exec.Command(os.Args[0], "serve", "--bogus")
	cmd.Env = append(os.Environ(), "LAKEHOLD_TEST_RUN_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	require.Equal(t, 2, ee.ExitCode())
	require.Equal(t, "catalog serve: flag provided but not defined: -bogus (see 'catalog serve --help')\n", stderr.String())
	require.Empty(t, stdout.String())

	cmd = exec.Command(os.Args[0], "maintain", "--help")
	cmd.Env = append(os.Environ(), "LAKEHOLD_TEST_RUN_MAIN=1")
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run())
	require.Contains(t, stdout.String(), "catalog maintain [flags] NAMESPACE.TABLE")
	require.Empty(t, stderr.String())
}

// TestParseArgs: flags before, between and after the arguments; "--" ends
// the flags.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args, pos []string
		desc      string
		dry       bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, "", false},
		{[]string{"a", "--description", "x y", "b"}, []string{"a", "b"}, "x y", false},
		{[]string{"--dry-run", "a", "--description=d"}, []string{"a"}, "d", true},
		{[]string{"a", "--dry-run", "b"}, []string{"a", "b"}, "", true},
		{[]string{"a", "--", "--dry-run", "-x"}, []string{"a", "--dry-run", "-x"}, "", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		desc := fs.String("description", "", "")
		dry := fs.Bool("dry-run", false, "")
		pos, err := parseArgs(fs, tc.args)
		require.NoError(t, err, "%v", tc.args)
		require.Equal(t, tc.pos, pos, "%v", tc.args)
		require.Equal(t, tc.desc, *desc, "%v", tc.args)
		require.Equal(t, tc.dry, *dry, "%v", tc.args)
	}
}

// TestVersion: `catalog version` and `catalog --version` print the module
// version, the VCS revision when the build recorded one, and Go's version.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		require.NoError(t, run(args, &out, io.Discard))
		require.True(t, strings.HasPrefix(out.String(), "catalog "), out.String())
		require.Contains(t, out.String(), runtime.Version())
		require.Equal(t, 1, strings.Count(out.String(), "\n"))
	}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{nil, "(devel) " + runtime.Version()},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0 go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "4dfb5322c1ab0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "(devel) (revision 4dfb5322c1ab+dirty, 2026-12-01T10:00:00Z) go1.26.8"},
	} {
		require.True(t, strings.HasPrefix(versionOf(tc.bi).String(), tc.want), "%s", versionOf(tc.bi))
	}
}

// TestCompletionBash: the script names every command, subcommand and
// flag of the table, is valid bash, and completes as expected.
func TestCompletionBash(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"completion", "bash"}, &out, io.Discard))
	script := out.String()
	for _, c := range allCommands(rootCommand)[1:] {
		require.Contains(t, script, c.name+")", "the script has a case for %s", c.path())
		all, _ := flagNames(c)
		for _, f := range all {
			require.Contains(t, script, f)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script")
	}
	path := filepath.Join(t.TempDir(), "catalog.bash")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	require.NoError(t, exec.Command(bash, "-n", path).Run(), "bash -n")
	for _, tc := range []struct {
		line    string // the words typed; the last one is completed
		want    []string
		notWant []string
	}{
		{"catalog ", []string{"serve", "warehouse", "completion", "version", "--help"}, nil},
		{"catalog war", []string{"warehouse"}, []string{"serve"}},
		{"catalog warehouse ", []string{"create", "set-profile", "list"}, []string{"serve"}},
		{"catalog warehouse list --", []string{"--data-dir", "--database-url"}, []string{"--location", "--profile"}},
		{"catalog warehouse create lake --lo", []string{"--location"}, nil},
		{"catalog serve --max-h", []string{"--max-header-bytes"}, nil},
		{"catalog serve --data-dir ", nil, []string{"--listen"}},
		{"catalog serve --migrate --li", []string{"--listen"}, nil},
		{"catalog maintain ns.t --dry-run --ret", []string{"--retain-last"}, nil},
		{"catalog help ware", []string{"warehouse"}, nil},
		{"catalog help role ", []string{"grant", "revoke"}, nil},
		{"catalog completion ", []string{"bash"}, nil},
	} {
		ws := strings.Split(tc.line, " ")
		quoted := make([]string, len(ws))
		for i, w := range ws {
			quoted[i] = "'" + w + "'"
		}
		prog := "source " + path + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" +
			strconv.Itoa(len(ws)-1) + "; _catalog; printf '%s\\n' \"${COMPREPLY[@]}\""
		got, err := exec.Command(bash, "-c", prog).Output()
		require.NoError(t, err, tc.line)
		lines := strings.Fields(string(got))
		for _, w := range tc.want {
			require.Contains(t, lines, w, "%q completes to %v", tc.line, lines)
		}
		for _, w := range tc.notWant {
			require.NotContains(t, lines, w, "%q completes to %v", tc.line, lines)
		}
	}
}

// TestStartAttrs: the start line names the version, the URLs, the store's
// kind (never the database URL) and the embedded store's absolute path.
func TestStartAttrs(t *testing.T) {
	v := buildVersion{Version: "v1.4.0", Revision: "4dfb5322c1ab0123", Go: "go1.26.8"}
	attrs := func(a []any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(a); i += 2 {
			m[a[i].(string)] = a[i+1]
		}
		return m
	}
	abs, err := filepath.Abs("rel/data")
	require.NoError(t, err)
	got := attrs(startAttrs(v, "127.0.0.1:8181", storageFlags{dataDir: "rel/data"}, "default", "none", "allow-all"))
	require.Equal(t, map[string]any{"version": "v1.4.0", "revision": "4dfb5322c1ab", "addr": "127.0.0.1:8181",
		"url": "http://127.0.0.1:8181", "console": "http://127.0.0.1:8181/ui/", "store": "sqlite", "data_dir": abs,
		"default_warehouse": "default", "auth": "none", "authorization": "allow-all"}, got)

	pg := storageFlags{dataDir: "data", databaseURL: "postgres://catalog:hunter2@db.internal:5432/catalog?sslmode=require"}
	a := startAttrs(v, "[::]:8181", pg, "lake", "on", "rbac")
	got = attrs(a)
	require.Equal(t, "postgres", got["store"])
	require.NotContains(t, got, "data_dir")
	require.Equal(t, "http://localhost:8181", got["url"])
	line, err := json.Marshal(got)
	require.NoError(t, err)
	require.NotContains(t, string(line), "hunter2")
	require.NotContains(t, string(line), "db.internal")
	require.Equal(t, "http://localhost:8181", attrs(startAttrs(v, "0.0.0.0:8181", pg, "", "on", "rbac"))["url"])
}

// TestServeStartLine runs `catalog serve` and reads its first log line.
func TestServeStartLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "serve", "--data-dir", dir, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "LAKEHOLD_TEST_RUN_MAIN=1", "CATALOG_DATABASE_URL=")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	sc := bufio.NewScanner(stderr)
	var line map[string]any
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		if m["msg"] == "catalog listening" {
			line = m
			break
		}
	}
	require.NotNil(t, line, "no start line")
	require.Equal(t, "sqlite", line["store"])
	require.Equal(t, dir, line["data_dir"])
	require.Equal(t, "none", line["auth"])
	require.NotEmpty(t, line["version"])
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, line["url"])
	require.Equal(t, line["url"].(string)+"/ui/", line["console"])
}
