package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// command is one entry of the command table (commands.go): a group of
// subcommands (subs), or a leaf whose setup registers its flags on a fresh
// FlagSet and returns what runs it with its positional arguments. Help,
// usage errors and shell completion are all derived from the table and
// from the very FlagSet the command parses, so they cannot drift from it.
type command struct {
	name    string // the word typed: "serve", "create"
	args    string // the positional arguments, after [flags]: "NAMESPACE.TABLE"
	nargs   int    // how many positional arguments a leaf takes; -1: its run checks them
	summary string // one line, for the command lists
	about   string // paragraphs for --help; may be empty
	// examples are command lines shown by --help, without the leading
	// "catalog".
	examples []string
	subs     []*command
	setup    func(fs *flag.FlagSet, e *cmdEnv) func(args []string) error
	parent   *command
}

// cmdEnv is what a command's run may use besides its flags.
type cmdEnv struct {
	stdout, stderr io.Writer
	cmd            *command
}

// usagef is a usage error of the running command: exit status 2 and a
// one-line hint.
func (e *cmdEnv) usagef(format string, args ...any) error {
	return &usageError{cmd: e.cmd, msg: fmt.Sprintf(format, args...)}
}

// usageError is a mistake in the command line (unknown command or flag,
// missing argument): main prints it on one line and exits 2.
type usageError struct {
	cmd *command
	msg string
}

func (e *usageError) Error() string {
	hint := e.cmd.path() + " --help"
	if e.cmd.parent == nil || e.cmd.name == "help" && e.cmd.parent.parent == nil {
		hint = "catalog help"
	}
	return fmt.Sprintf("%s: %s (see '%s')", e.cmd.path(), e.msg, hint)
}

// exitCode is the process status for what run returned: 0, 2 for a usage
// error, 1 for any other failure.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// path is the command line that names c: "catalog warehouse create".
func (c *command) path() string {
	if c.parent == nil {
		return c.name
	}
	return c.parent.path() + " " + c.name
}

// sub returns the subcommand named name, or nil.
func (c *command) sub(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// leaves returns every runnable command under c, in table order.
func (c *command) leaves() []*command {
	if c.subs == nil {
		return []*command{c}
	}
	var out []*command
	for _, s := range c.subs {
		out = append(out, s.leaves()...)
	}
	return out
}

// link sets the parent pointers of the tree under c.
func (c *command) link() *command {
	for _, s := range c.subs {
		s.parent = c
		s.link()
	}
	return c
}

// flagSet returns c's FlagSet, silent (errors come back to the caller),
// and the function that runs c once it has parsed.
func (c *command) flagSet(stdout, stderr io.Writer) (*flag.FlagSet, func([]string) error) {
	fs := flag.NewFlagSet(c.path(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var run func([]string) error
	if c.setup != nil {
		run = c.setup(fs, &cmdEnv{stdout: stdout, stderr: stderr, cmd: c})
	}
	return fs, run
}

// hasFlags reports whether fs defines any flag.
func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// usageLine is how c is invoked: "catalog maintain [flags] NAMESPACE.TABLE".
func (c *command) usageLine() string {
	if c.subs != nil {
		return c.path() + " COMMAND [flags] [ARGS]"
	}
	s := c.path()
	if fs, _ := c.flagSet(io.Discard, io.Discard); hasFlags(fs) {
		s += " [flags]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

// dispatch finds the command args name under c and runs it.
func dispatch(c *command, args []string, stdout, stderr io.Writer) error {
	for c.subs != nil {
		if len(args) == 0 {
			if c.parent == nil {
				fmt.Fprint(stderr, helpText(c))
				return &usageError{cmd: c, msg: "missing command"}
			}
			return &usageError{cmd: c, msg: "missing command: " + strings.Join(subNames(c), ", ")}
		}
		switch args[0] {
		case "-h", "-help", "--help":
			fmt.Fprint(stdout, helpText(c))
			return nil
		case "-version", "--version":
			if c.parent == nil {
				args = []string{"version"}
			}
		}
		s := c.sub(args[0])
		if s == nil {
			what := "command"
			if c.parent != nil {
				what = c.name + " command"
			}
			if strings.HasPrefix(args[0], "-") {
				return &usageError{cmd: c, msg: fmt.Sprintf("flag %s before the command: flags follow it", args[0])}
			}
			return &usageError{cmd: c, msg: fmt.Sprintf("unknown %s %q; commands: %s", what, args[0], strings.Join(subNames(c), ", "))}
		}
		c, args = s, args[1:]
	}
	fs, run := c.flagSet(stdout, stderr)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, helpText(c))
		return nil
	}
	if err != nil {
		return &usageError{cmd: c, msg: err.Error()}
	}
	if c.nargs >= 0 && len(pos) != c.nargs {
		var msg string
		if len(pos) < c.nargs {
			msg = "missing " + strings.Fields(c.args)[len(pos)]
		} else {
			msg = fmt.Sprintf("unexpected argument %q", pos[c.nargs])
		}
		return &usageError{cmd: c, msg: msg + "; usage: " + c.usageLine()}
	}
	return run(pos)
}

func subNames(c *command) []string {
	var out []string
	for _, s := range c.subs {
		out = append(out, s.name)
	}
	return out
}

// parseArgs parses fs from args, with flags before, between and after the
// positional arguments (the flag package alone stops at the first one),
// and returns the positional arguments. After "--" every argument is
// positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// helpText is what --help, -h and 'catalog help ...' print for c.
func helpText(c *command) string {
	var b strings.Builder
	if c.parent == nil {
		b.WriteString(c.summary + "\n\n")
	}
	fmt.Fprintf(&b, "Usage:\n  %s\n", c.usageLine())
	if c.parent != nil && c.summary != "" {
		fmt.Fprintf(&b, "\n%s.\n", upperFirst(c.summary))
	}
	if c.about != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(c.about))
	}
	if c.subs != nil {
		b.WriteString("\nCommands:\n")
		var rows [][2]string
		for _, l := range c.leaves() {
			name := strings.TrimPrefix(l.path(), c.path()+" ")
			if l.args != "" {
				name += " " + l.args
			}
			rows = append(rows, [2]string{name, l.summary})
		}
		writeColumns(&b, rows)
	} else if fs, _ := c.flagSet(io.Discard, io.Discard); hasFlags(fs) {
		b.WriteString("\nFlags:\n")
		writeFlags(&b, fs)
	}
	if len(c.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(&b, "  catalog %s\n", e)
		}
	}
	if c.subs != nil {
		if c.parent == nil {
			b.WriteString("\n" + strings.TrimSpace(storageNote) + "\n")
			b.WriteString("\nRun 'catalog help COMMAND [SUBCOMMAND]' (or add --help) for a command's flags and examples.\n")
		} else {
			fmt.Fprintf(&b, "\nRun '%s COMMAND --help' for a command's flags and examples.\n", c.path())
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeColumns writes two-column rows, the second column aligned; a first
// column too wide puts its second on the next line.
func writeColumns(b *strings.Builder, rows [][2]string) {
	const maxWidth = 32
	width := 0
	for _, r := range rows {
		if n := len(r[0]); n <= maxWidth && n > width {
			width = n
		}
	}
	for _, r := range rows {
		if len(r[0]) > width {
			fmt.Fprintf(b, "  %s\n  %-*s  %s\n", r[0], width, "", r[1])
			continue
		}
		fmt.Fprintf(b, "  %-*s  %s\n", width, r[0], r[1])
	}
}

// sensitiveFlags take their default from an environment variable that
// may hold a secret (a password in the database URL): help never prints it.
var sensitiveFlags = map[string]bool{"database-url": true, "secret-key": true, "token": true, "credential": true}

// writeFlags lists fs's flags in name order: the flag and its value's type,
// then the text, wrapped, with the default once (none for zero values).
func writeFlags(b *strings.Builder, fs *flag.FlagSet) {
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	for _, f := range flags {
		typ, text := flag.UnquoteUsage(f)
		if typ == "value" {
			typ = valueTypeName(f.Value)
		}
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		b.WriteString(line + "\n")
		writeWrapped(b, text+defaultNote(f, typ, text), "        ", 80)
	}
}

// valueTypeName names the value of a flag.Var flag.
func valueTypeName(v flag.Value) string {
	switch v.(type) {
	case *byteSize, *intSize:
		return "size"
	case *multiFlag:
		return "NAME=URI"
	}
	return "value"
}

// defaultNote is " (default X)" for a flag whose default is not the zero
// value and whose text does not state it already.
func defaultNote(f *flag.Flag, typ, text string) string {
	if sensitiveFlags[f.Name] {
		if f.DefValue != "" {
			return " (default: set from the environment)"
		}
		return ""
	}
	if strings.Contains(text, "(default") {
		return ""
	}
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return ""
	}
	switch typ {
	case "string":
		return fmt.Sprintf(" (default %q)", f.DefValue)
	case "":
		if f.DefValue == "true" {
			return fmt.Sprintf(" (default true; --%s=false turns it off)", f.Name)
		}
	case "duration":
		return " (default " + shortDuration(f.DefValue) + ")"
	}
	return " (default " + f.DefValue + ")"
}

// shortDuration drops the zero minutes and seconds time.Duration.String
// writes: 30m, 1h, 12h, 1m30s.
func shortDuration(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// writeWrapped writes text in lines of at most width columns, each
// starting with indent.
func writeWrapped(b *strings.Builder, text, indent string, width int) {
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
}

// findCommand follows names from c: nil when one is not a command.
func findCommand(c *command, names []string) *command {
	for _, n := range names {
		if c = c.sub(n); c == nil {
			return nil
		}
	}
	return c
}
