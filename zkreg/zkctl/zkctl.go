package zkctl

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// DefaultServer is the ZooKeeper address used when neither -zk nor
// $YRPC_ZK is set.
const DefaultServer = "127.0.0.1:2181"

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed
	ExitUsage = 2 // bad command line
)

// connectTimeout bounds the wait for a ZooKeeper session.
const connectTimeout = 10 * time.Second

const usage = `usage: yrpcc ctl [-zk HOST:PORT[,HOST:PORT...]] [-root PATH] COMMAND ...

Governance of yrpc services in ZooKeeper (-zk defaults to $YRPC_ZK, else ` + DefaultServer + `).

Commands:
  ls [SERVICE] [--json]                    providers, consumers and config (of every service)
  drain SERVICE ADDR                       stop sending new calls to a provider
  undrain SERVICE ADDR                     send calls to it again
  weight SERVICE ADDR W                    override a provider's weight (0 removes the override)
  limit SERVICE RATE BURST [--per-app]     rate limit per client IP (or per calling app)
  limit SERVICE off                        remove the rate limit override
  mock SERVICE METHOD empty|fail CODE [MSG]|value-hex HEX|off [--force] [--for DURATION]
                                           mock a method: on failure, or always with --force;
                                           --for sets an expiry (e.g. 10m)

Every command that names a SERVICE takes --group G and --version V.
`

// Run runs `yrpcc ctl` with args (the words after "ctl"), writing results
// to stdout and errors (one line each) to stderr, and returns the exit
// code. It reads $YRPC_ZK for the default server.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{stdout: stdout, stderr: stderr, now: time.Now, server: os.Getenv("YRPC_ZK")}
	if c.server == "" {
		c.server = DefaultServer
	}
	return c.run(ctx, args)
}

// cli is one invocation.
type cli struct {
	stdout, stderr io.Writer
	now            func() time.Time
	server         string
	root           string
}

// usageError marks errors that exit with ExitUsage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func (c *cli) run(ctx context.Context, args []string) int {
	err := c.dispatch(ctx, args)
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(c.stdout, usage)
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "yrpcc ctl: %v (see yrpcc ctl --help)\n", err)
		return ExitUsage
	default:
		fmt.Fprintf(c.stderr, "yrpcc ctl: %v\n", err)
		return ExitError
	}
}

// cmdFlags are the flags every command accepts, anywhere on the line.
type cmdFlags struct {
	group, version string
	json, perApp   bool
	force          bool
	forDur         time.Duration
}

func (c *cli) flagSet(f *cmdFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("yrpcc ctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run, in one line
	fs.StringVar(&c.server, "zk", c.server, "ZooKeeper servers, comma-separated")
	fs.StringVar(&c.root, "root", zkreg.DefaultRoot, "root path of yrpc in ZooKeeper")
	fs.StringVar(&f.group, "group", "", "service group")
	fs.StringVar(&f.version, "version", "", "service version")
	fs.BoolVar(&f.json, "json", false, "ls: print JSON")
	fs.BoolVar(&f.perApp, "per-app", false, "limit: per calling app instead of per client IP")
	fs.BoolVar(&f.force, "force", false, "mock: answer every call, not only failed ones")
	fs.DurationVar(&f.forDur, "for", 0, "mock: expire after this long (0: never)")
	return fs
}

// parse parses flags anywhere among args and returns the other words.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return words, nil
		}
		words = append(words, args[0])
		args = args[1:]
	}
}

func (c *cli) dispatch(ctx context.Context, args []string) error {
	var f cmdFlags
	words, err := parse(c.flagSet(&f), args)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return usagef("no command")
	}
	cmd, words := words[0], words[1:]
	if cmd == "help" {
		return flag.ErrHelp
	}
	if err := checkArgs(cmd, words); err != nil {
		return err
	}
	if cmd == "ls" {
		reg, err := c.connect(ctx)
		if err != nil {
			return err
		}
		defer reg.Close()
		return c.ls(ctx, reg, f, words)
	}
	plan, ok := map[string]func(cmdFlags, []string) (edit, error){
		"drain":   drain(true),
		"undrain": drain(false),
		"weight":  weight,
		"limit":   limit,
		"mock":    c.mock,
	}[cmd]
	if !ok {
		return usagef("unknown command %q", cmd)
	}
	// Check the whole command line before connecting.
	e, err := plan(f, words)
	if err != nil {
		return err
	}
	reg, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer reg.Close()
	if err := reg.UpdateConfig(ctx, e.key, e.fn); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: %s\n", e.key, e.what)
	return nil
}

// edit is a validated config change.
type edit struct {
	key  registry.Key
	what string // for the confirmation line
	fn   func(*registry.Config) error
}

// checkArgs validates the number of words before connecting.
func checkArgs(cmd string, words []string) error {
	lo, hi := 0, 0
	switch cmd {
	case "ls":
		lo, hi = 0, 1
	case "drain", "undrain":
		lo, hi = 2, 2
	case "weight":
		lo, hi = 3, 3
	case "limit":
		lo, hi = 2, 3
	case "mock":
		lo, hi = 3, 5
	default:
		return usagef("unknown command %q", cmd)
	}
	if len(words) < lo || len(words) > hi {
		return usagef("%s: wrong number of arguments (%d)", cmd, len(words))
	}
	return nil
}

func (c *cli) connect(ctx context.Context) (*zkreg.Registry, error) {
	var servers []string
	for _, s := range strings.Split(c.server, ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	reg, err := zkreg.New(ctx, zkreg.Options{Servers: servers, Root: c.root})
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper %s: %w", c.server, err)
	}
	return reg, nil
}

func key(service string, f cmdFlags) registry.Key {
	return registry.Key{Service: service, Group: f.group, Version: f.version}
}

func drain(on bool) func(cmdFlags, []string) (edit, error) {
	return func(f cmdFlags, w []string) (edit, error) {
		addr := w[1]
		what := "drained " + addr
		if !on {
			what = "undrained " + addr
		}
		return edit{key(w[0], f), what, func(cfg *registry.Config) error {
			setInstance(cfg, addr, func(ic *registry.InstanceConfig) { ic.Draining = on })
			return nil
		}}, nil
	}
}

func weight(f cmdFlags, w []string) (edit, error) {
	addr := w[1]
	n, err := strconv.Atoi(w[2])
	if err != nil || n < 0 {
		return edit{}, usagef("weight: bad weight %q (want an integer >= 0)", w[2])
	}
	what := fmt.Sprintf("weight of %s set to %d", addr, n)
	if n == 0 {
		what = "weight override of " + addr + " removed"
	}
	return edit{key(w[0], f), what, func(cfg *registry.Config) error {
		setInstance(cfg, addr, func(ic *registry.InstanceConfig) { ic.Weight = n })
		return nil
	}}, nil
}

// setInstance edits the override of addr, dropping it when it becomes empty.
func setInstance(cfg *registry.Config, addr string, edit func(*registry.InstanceConfig)) {
	ic := cfg.Instances[addr]
	edit(&ic)
	if ic == (registry.InstanceConfig{}) {
		delete(cfg.Instances, addr)
		if len(cfg.Instances) == 0 {
			cfg.Instances = nil
		}
		return
	}
	if cfg.Instances == nil {
		cfg.Instances = make(map[string]registry.InstanceConfig)
	}
	cfg.Instances[addr] = ic
}

func limit(f cmdFlags, w []string) (edit, error) {
	k := key(w[0], f)
	if len(w) == 2 {
		if w[1] != "off" {
			return edit{}, usagef("limit: want RATE BURST or off, got %q", w[1])
		}
		return edit{k, "rate limit removed", func(cfg *registry.Config) error {
			cfg.RateLimit = nil
			return nil
		}}, nil
	}
	rate, err := strconv.ParseFloat(w[1], 64)
	if err != nil || rate <= 0 {
		return edit{}, usagef("limit: bad rate %q (want a number > 0)", w[1])
	}
	burst, err := strconv.Atoi(w[2])
	if err != nil || burst < 1 {
		return edit{}, usagef("limit: bad burst %q (want an integer >= 1)", w[2])
	}
	rl := registry.RateLimit{Rate: rate, Burst: burst, PerApp: f.perApp}
	return edit{k, "rate limit set to " + describeLimit(rl), func(cfg *registry.Config) error {
		cfg.RateLimit = &rl
		return nil
	}}, nil
}

func (c *cli) mock(f cmdFlags, w []string) (edit, error) {
	k, method, action, rest := key(w[0], f), w[1], w[2], w[3:]
	if action == "off" {
		if len(rest) != 0 {
			return edit{}, usagef("mock: off takes no arguments")
		}
		return edit{k, "mock of " + method + " removed", func(cfg *registry.Config) error {
			delete(cfg.Mocks, method)
			if len(cfg.Mocks) == 0 {
				cfg.Mocks = nil
			}
			return nil
		}}, nil
	}
	m := registry.MockConfig{Force: f.force}
	switch action {
	case "empty":
		if len(rest) != 0 {
			return edit{}, usagef("mock: empty takes no arguments")
		}
		m.Action = "empty"
	case "fail":
		if len(rest) == 0 {
			return edit{}, usagef("mock: fail needs a CODE")
		}
		code, err := rt.ParseCode(rest[0])
		if err != nil || code == rt.OK {
			return edit{}, usagef("mock: bad code %q (want a status name such as Unavailable)", rest[0])
		}
		m.Action, m.Code = "fail", code.String()
		if len(rest) > 1 {
			m.Message = rest[1]
		}
	case "value-hex":
		if len(rest) != 1 {
			return edit{}, usagef("mock: value-hex needs one HEX argument")
		}
		b, err := hex.DecodeString(rest[0])
		if err != nil {
			return edit{}, usagef("mock: bad hex value: %v", err)
		}
		m.Action, m.Value = "value", b
	default:
		return edit{}, usagef("mock: unknown action %q (want empty, fail, value-hex or off)", action)
	}
	if f.forDur < 0 {
		return edit{}, usagef("mock: negative --for %v", f.forDur)
	}
	if f.forDur > 0 {
		m.Expires = c.now().Add(f.forDur).UTC().Round(time.Second)
	}
	return edit{k, "mock of " + method + " set: " + describeMock(m, c.now()), func(cfg *registry.Config) error {
		if cfg.Mocks == nil {
			cfg.Mocks = make(map[string]registry.MockConfig)
		}
		cfg.Mocks[method] = m
		return nil
	}}, nil
}
