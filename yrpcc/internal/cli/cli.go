package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// Version is yrpcc's version, printed by `yrpcc version`.
const Version = "v0.1.0-dev"

// Env runs yrpcc commands. Create it with New; tests replace its fields.
// An Env is not safe for concurrent use by several commands.
type Env struct {
	Stdout, Stderr io.Writer
	// Dir is the working directory that relative paths are resolved in; ""
	// means the process's.
	Dir string
	// Load loads a schema package; New sets load.Load.
	Load func(ctx context.Context, pattern string, opts load.Options) (*gen.Spec, error)
	// Generate renders a spec; New sets gen.Generate.
	Generate func(spec *gen.Spec, cfg gen.Config) ([]gen.File, error)
	// Notice is how long loading a schema may take before the command
	// says on Stderr what it is doing (a first load builds the schema,
	// which can take minutes); 0 means it never says. New sets 3s.
	Notice time.Duration
}

// New returns an Env that writes to stdout and stderr and uses the real
// loader and generator.
func New(stdout, stderr io.Writer) *Env {
	return &Env{Stdout: stdout, Stderr: stderr, Load: load.Load, Generate: gen.Generate, Notice: 3 * time.Second}
}

// command is one subcommand.
type command struct {
	name, args, summary string
	run                 func(e *Env, ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"init", "[--dir DIR] [--service NAME]... NAME...", "scaffold schema files for new messages and services", (*Env).runInit},
		{"generate", "[--target DIR] [--package NAME] [-v] SCHEMA", "generate Go code from a schema package", (*Env).runGenerate},
		{"describe", "[--package NAME] SCHEMA", "print the services, methods, policies and messages of a schema", (*Env).runDescribe},
		{"proto", "[--out FILE] [--go-package PATH] [--package NAME] SCHEMA", "print an equivalent proto3 file", (*Env).runProto},
		{"version", "", "print yrpcc's version", (*Env).runVersion},
		{"ctl", "...", "read and change governance config in the registry", (*Env).runCtl},
	}
}

// packageUsage documents the --package flag of describe and proto.
const packageUsage = "protobuf package (the method-ID namespace) when the schema has no schema.Package (default, as generate uses: the import path element above the schema package, e.g. shop for example.com/shop/schema)"

// usageError reports bad arguments; the message says what is wrong.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp means the user asked for help, which was printed.
var errHelp = flag.ErrHelp

// Run runs the command in args (without the program name) and returns the
// process exit status: 0 on success, 1 on failure, 2 on bad usage. Errors
// go to Stderr as "yrpcc: ..." lines.
func (e *Env) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		e.usage(e.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		switch len(args) {
		case 1:
			e.usage(e.Stdout)
			return 0
		case 2:
			// yrpcc help CMD is yrpcc CMD --help.
			if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == args[1] }) {
				fmt.Fprintf(e.Stderr, "yrpcc help: unknown command %q (see yrpcc --help)\n", args[1])
				return 2
			}
			return e.Run(ctx, []string{args[1], "--help"})
		}
		fmt.Fprintf(e.Stderr, "yrpcc help: want one command, got %q\n", args[1:])
		return 2
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(e, ctx, args[1:])
		var ue *usageError
		var ee *exitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.code
		case errors.Is(err, errHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(e.Stderr, "yrpcc %s: %v (see yrpcc %s --help)\n", c.name, err, c.name)
			return 2
		default:
			fmt.Fprintf(e.Stderr, "yrpcc %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(e.Stderr, "yrpcc: unknown command %q (see yrpcc --help)\n", args[0])
	return 2
}

func (e *Env) usage(w io.Writer) {
	fmt.Fprintf(w, "yrpcc %s: yrpc's code generator.\n\nUsage:\n", Version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  yrpcc %-9s %s\n", c.name, c.args)
	}
	fmt.Fprintf(w, "\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nSCHEMA is a schema package directory (./schema; a bare name such as schema is\nthe directory when it exists) or an import path.\nRun yrpcc help COMMAND (or yrpcc COMMAND --help) for a command's flags.\n")
}

// flagSet returns a flag set for command name whose --help prints to
// Stdout.
func (e *Env) flagSet(name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.Stdout, "Usage: yrpcc %s %s\n\n%s\n", name, args, about)
		fs.SetOutput(e.Stdout)
		if hasFlags(fs) {
			fmt.Fprintln(e.Stdout, "\nFlags:")
			fs.PrintDefaults()
		}
		fs.SetOutput(io.Discard)
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses flags that may come before, between or after positional
// arguments and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp // fs.Usage has printed the help
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// path resolves p against e.Dir.
func (e *Env) path(p string) string {
	if filepath.IsAbs(p) || e.Dir == "" {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// loadSchema loads the one schema package named in args for command cmd,
// saying so on Stderr when it takes longer than e.Notice.
func (e *Env) loadSchema(ctx context.Context, cmd string, args []string, opts load.Options) (*gen.Spec, error) {
	if len(args) != 1 {
		return nil, usagef("want one schema package, got %d arguments", len(args))
	}
	args = []string{e.schemaArg(args[0])}
	opts.Dir = e.Dir
	done := e.notice(fmt.Sprintf("yrpcc %s: loading schema %s (the first run builds it, this can take a minute)...", cmd, args[0]),
		fmt.Sprintf("yrpcc %s: loading schema %s took", cmd, args[0]))
	spec, err := e.Load(ctx, args[0], opts)
	done()
	return spec, err
}

// notice prints start on Stderr once e.Notice has passed, unless the
// returned done is called first; if start was printed, done prints end
// followed by the time it took. done returns when nothing more will be printed.
func (e *Env) notice(start, end string) (done func()) {
	if e.Notice <= 0 {
		return func() {}
	}
	begin := time.Now()
	stop := make(chan struct{})
	printed := make(chan bool, 1)
	go func() {
		t := time.NewTimer(e.Notice)
		defer t.Stop()
		select {
		case <-t.C:
			fmt.Fprintln(e.Stderr, start)
			printed <- true
		case <-stop:
			printed <- false
		}
	}()
	return func() {
		close(stop)
		if <-printed {
			fmt.Fprintf(e.Stderr, "%s %v\n", end, time.Since(begin).Round(100*time.Millisecond))
		}
	}
}

func (e *Env) runVersion(_ context.Context, args []string) error {
	fs := e.flagSet("version", "", "Version prints yrpcc's version and the generated-code version it writes.")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected arguments %q", rest)
	}
	fmt.Fprintf(e.Stdout, "yrpcc %s (spec version %d, generated code needs rt.SupportPackageIsVersion1)\n", Version, gen.SpecVersion)
	return nil
}

// runCtl hands the arguments to zkctl, which prints its own results and
// one-line errors.
func (e *Env) runCtl(ctx context.Context, args []string) error {
	if code := e.ctl(ctx, args); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// exitError is a failure already reported on Stderr.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// isDir reports whether p names an existing directory.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// schemaArg returns the schema argument a as the loader should see it: a
// bare relative directory such as "schema" (the directory init writes)
// becomes "./schema", since the go command would read it as an import path
// and answer "package schema is not in std"; anything else is unchanged.
func (e *Env) schemaArg(a string) string {
	if !looksLikePath(a) && isDir(e.path(a)) {
		return "./" + a
	}
	return a
}

// looksLikePath reports whether a schema argument is a directory path
// rather than an import path.
func looksLikePath(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p) || strings.HasPrefix(p, `.\`)
}
