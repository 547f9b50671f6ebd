package zkctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// DefaultServer is the ZooKeeper address used when neither -zk nor
// $YRPC_ZK is set.
const DefaultServer = "127.0.0.1:2181"

// Environment variables read by Run.
const (
	EnvServer = "YRPC_ZK"      // default of -zk
	EnvAuth   = "YRPC_ZK_AUTH" // default of --auth: digest:USER:PASSWORD
	EnvACL    = "YRPC_ZK_ACL"  // default of --acl: providers=ID,operators=ID

	EnvTLS           = "YRPC_ZK_TLS"            // default of --zk-tls: 1 for TLS with the system's CAs
	EnvTLSCA         = "YRPC_ZK_TLS_CA"         // default of --zk-tls-ca: PEM file of the CAs of ZooKeeper's certificate
	EnvTLSCert       = "YRPC_ZK_TLS_CERT"       // default of --zk-tls-cert: PEM file of the client certificate
	EnvTLSKey        = "YRPC_ZK_TLS_KEY"        // default of --zk-tls-key: PEM file of its private key
	EnvPlaintextAuth = "YRPC_ZK_PLAINTEXT_AUTH" // default of --zk-plaintext-auth: 1 to send --auth without TLS
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed, or was refused
	ExitUsage = 2 // bad command line
)

// connectTimeout bounds the wait for a ZooKeeper session.
const connectTimeout = 10 * time.Second

// sessionTimeout is the session timeout ctl asks for. It also bounds the
// wait for a server's answer to the connect handshake: half of
// connectTimeout, so that a server that never answers (not ZooKeeper) is
// named in the error before connectTimeout ends the wait.
const sessionTimeout = connectTimeout / 2

const usage = `usage: yrpcc ctl [-zk HOST:PORT[,HOST:PORT...]] [-root PATH] [--auth digest:USER:PASSWORD] [--zk-tls-* ...] COMMAND ...

Governance of yrpc services in ZooKeeper (-zk defaults to $YRPC_ZK, else ` + DefaultServer + `).

Commands:
  ls [SERVICE] [--json]                    providers, consumers and config (of every service)
  drain SERVICE ADDR                       stop sending new calls to a provider
  undrain SERVICE ADDR                     send calls to it again
  weight SERVICE ADDR W                    override a provider's weight, 1..10000 (0 removes the override)
  limit SERVICE RATE BURST [--per-app]     rate limit per client IP (or per calling app)
  limit SERVICE off                        remove the rate limit override
  mock SERVICE METHOD ACTION [--always] [--for DURATION]
                                           mock a method: on failure, or on every call with
                                           --always; --for sets an expiry (e.g. 10m). ACTION is
                                           empty | fail CODE [MSG] | value-hex HEX |
                                           value --json '{...}' --schema DIR | off
  rm SERVICE limit|all                     remove the rate limit, or the whole config
  rm SERVICE mock METHOD                   remove a mock
  rm SERVICE instance ADDR                 remove a provider's overrides (drain, weight)
  health ADDR [SERVICE] [--timeout D]      ask a provider's grpc.health.v1 service how it is
                                           (no ZooKeeper needed; exit 0 for SERVING)

Every command that names a SERVICE takes --group G and --version V, and
prints what it changed (before -> after). Commands that write:
  --dry-run      print the change, write nothing
  --force        write even what the checks refuse: by default a command refuses a
                 service, group, version, provider address or method that no
                 registered provider has (the providers' payloads list their methods)

ZooKeeper identity (an operator's, needed to write config in a locked-down
registry; secrets are never printed), and TLS to ZooKeeper's secureClientPort:
  --auth digest:USER:PASSWORD   or $YRPC_ZK_AUTH: a digest credential; refused
                                without TLS unless --zk-plaintext-auth or
                                $YRPC_ZK_PLAINTEXT_AUTH=1 (a trusted network)
  --zk-tls-cert FILE --zk-tls-key FILE
                                or $YRPC_ZK_TLS_CERT and $YRPC_ZK_TLS_KEY: a client
                                certificate (PEM), whose subject is ZooKeeper's x509
                                identity (x509:CN=...) when ZooKeeper authenticates by it
  --zk-tls-ca FILE              or $YRPC_ZK_TLS_CA: the CAs of ZooKeeper's certificate
  --zk-tls                      or $YRPC_ZK_TLS=1: TLS with the system's CAs
                                (any --zk-tls-* flag turns TLS on)
  --acl providers=ID,operators=ID
                                or $YRPC_ZK_ACL: the registry's roles (digest ids or
                                x509:DN ids), for the nodes ctl creates (default:
                                operators = the --auth credential's, else the certificate's)
`

// Env runs `yrpcc ctl`. Make one with its fields set; the zero value
// writes nowhere. An Env may run one command at a time.
type Env struct {
	// Stdout receives results, Stderr errors (one line each) and notes.
	Stdout, Stderr io.Writer
	// Getenv reads the variables named Env* ($YRPC_ZK, $YRPC_ZK_AUTH,
	// ...); nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock of mock expiries; nil means time.Now.
	Now func() time.Time
	// MockValue encodes the JSON of `mock SERVICE METHOD value --json J
	// --schema DIR` as the wire form of METHOD's response, from the schema
	// in DIR. yrpcc sets it (it loads schemas); nil refuses the value
	// action.
	MockValue func(ctx context.Context, schemaDir, service, method, json string) ([]byte, error)
}

// Run runs `yrpcc ctl` with args (the words after "ctl"), writing results
// to stdout and errors (one line each) to stderr, and returns the exit
// code. It reads the environment with os.Getenv.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Env{Stdout: stdout, Stderr: stderr}.Run(ctx, args)
}

// Run runs `yrpcc ctl` with args and returns the exit code.
func (e Env) Run(ctx context.Context, args []string) int {
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	c := &cli{Env: e, server: e.Getenv(EnvServer)}
	if c.server == "" {
		c.server = DefaultServer
	}
	return c.run(ctx, args)
}

// cli is one invocation.
type cli struct {
	Env
	server string
	root   string
	certID string // the x509 id of the client certificate, if any
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
		fmt.Fprint(c.Stdout, usage)
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(c.Stderr, "yrpcc ctl: %v (see yrpcc ctl --help)\n", err)
		return ExitUsage
	default:
		fmt.Fprintf(c.Stderr, "yrpcc ctl: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return ExitError
	}
}

// cmdFlags are the flags every command accepts, anywhere on the line.
type cmdFlags struct {
	group, version string
	json           jsonFlag
	perApp         bool
	always         bool
	force, dryRun  bool
	forDur         time.Duration
	schema         string
	auth, acl      string // secret; never printed
	tls            tlsFlags
}

// jsonFlag is `ls --json` (a switch) and `mock ... value --json J`: the
// JSON may follow as --json=J or as the next word.
type jsonFlag struct {
	set  bool
	text string
}

func (j *jsonFlag) String() string   { return "" }
func (j *jsonFlag) IsBoolFlag() bool { return true }
func (j *jsonFlag) Set(s string) error {
	j.set = true
	if s != "true" {
		j.text = s
	}
	return nil
}

func (c *cli) flagSet(f *cmdFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("yrpcc ctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run, in one line
	fs.StringVar(&c.server, "zk", c.server, "ZooKeeper servers, comma-separated")
	fs.StringVar(&c.root, "root", zkreg.DefaultRoot, "root path of yrpc in ZooKeeper")
	fs.StringVar(&f.group, "group", "", "service group")
	fs.StringVar(&f.version, "version", "", "service version")
	fs.Var(&f.json, "json", "ls: print JSON; mock value: the value")
	fs.BoolVar(&f.perApp, "per-app", false, "limit: per calling app instead of per client IP")
	fs.BoolVar(&f.always, "always", false, "mock: answer every call, not only failed ones")
	fs.BoolVar(&f.force, "force", false, "write even what the checks refuse")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the change, write nothing")
	fs.DurationVar(&f.forDur, "for", 0, "mock: expire after this long (0: never)")
	fs.StringVar(&f.schema, "schema", "", "mock value: the schema package directory")
	// String flags that never fail to parse: the flag package would
	// print a rejected value in its error.
	fs.StringVar(&f.auth, "auth", "", "ZooKeeper credentials, digest:USER:PASSWORD (default $YRPC_ZK_AUTH)")
	fs.StringVar(&f.acl, "acl", "", "the registry's roles, providers=ID,operators=ID (default $YRPC_ZK_ACL)")
	fs.BoolVar(&f.tls.on, "zk-tls", false, "TLS to ZooKeeper with the system's CAs (default $YRPC_ZK_TLS)")
	fs.StringVar(&f.tls.ca, "zk-tls-ca", "", "PEM file of the CAs of ZooKeeper's certificate (default $YRPC_ZK_TLS_CA)")
	fs.StringVar(&f.tls.cert, "zk-tls-cert", "", "PEM file of the client certificate (default $YRPC_ZK_TLS_CERT)")
	fs.StringVar(&f.tls.key, "zk-tls-key", "", "PEM file of its private key (default $YRPC_ZK_TLS_KEY)")
	fs.BoolVar(&f.tls.plaintextAuth, "zk-plaintext-auth", false, "send --auth without TLS (default $YRPC_ZK_PLAINTEXT_AUTH)")
	return fs
}

// CommandAt returns the index in args of the command: the first word that
// is neither a flag of `yrpcc ctl` nor a flag's value; -1 when there is
// none. yrpcc routes the commands that Run does not know (health) by it,
// so that they may follow flags as the usage line shows.
func CommandAt(args []string) int {
	var f cmdFlags
	fs := (&cli{}).flagSet(&f)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case a == "-" || !strings.HasPrefix(a, "-"):
			return i
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		fl := fs.Lookup(name)
		if fl == nil || inline {
			continue
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		i++ // the flag's value
	}
	return -1
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
	opts, err := c.registryOptions(f)
	if err != nil {
		return err
	}
	if cmd == "ls" {
		reg, err := c.connect(ctx, opts)
		if err != nil {
			return err
		}
		defer reg.Close()
		return c.ls(ctx, reg, f, words)
	}
	// Check the whole command line before connecting.
	e, err := c.plan(ctx, cmd, f, words)
	if err != nil {
		return err
	}
	reg, err := c.connect(ctx, opts)
	if err != nil {
		return err
	}
	defer reg.Close()
	if !f.force {
		ls, err := reg.List(ctx)
		if err != nil {
			return err
		}
		if err := e.check(newCatalog(ls), c.Stderr); err != nil {
			return err
		}
	}
	return c.apply(ctx, reg, e, f, opts)
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
	case "limit", "rm":
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

// registryOptions reads the credentials and roles from the flags or the
// environment. Its errors name where a bad value came from, never the
// value.
func (c *cli) registryOptions(f cmdFlags) (zkreg.Options, error) {
	var servers []string
	for _, s := range strings.Split(c.server, ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
		if strings.Contains(s, "/") {
			return zkreg.Options{}, usagef("-zk: %q has a path: want HOST:PORT (ZooKeeper chroots are not supported: give yrpc's whole path with -root)", s)
		}
	}
	o := zkreg.Options{Servers: servers, Root: c.root, SessionTimeout: sessionTimeout, FailFast: true}
	if err := zkreg.CheckRoot(c.root); err != nil {
		return o, usagef("-root: %v", err)
	}
	auth, authFrom := c.setting(f.auth, "--auth", EnvAuth)
	acl, aclFrom := c.setting(f.acl, "--acl", EnvACL)
	var err error
	if o.TLS, c.certID, err = c.zkTLS(f.tls); err != nil {
		return o, err
	}
	roles := zkreg.Roles{Operators: c.certID}
	if auth != "" {
		cred, err := zkreg.ParseCredential(auth)
		if err != nil {
			return o, usagef("%s: %v", authFrom, err)
		}
		o.Auth = []zkreg.Credential{cred}
		roles.Operators = cred.DigestID()
	}
	if err := c.checkPlaintextAuth(f.tls, authFrom, o); err != nil {
		return o, err
	}
	if acl != "" {
		r, err := zkreg.ParseRoles(acl)
		if err != nil {
			return o, usagef("%s: %v", aclFrom, err)
		}
		if r.Operators == "" {
			r.Operators = roles.Operators
		}
		roles = r
	}
	if roles.Operators != "" {
		p, err := zkreg.DigestPolicy(roles)
		if err != nil {
			return o, usagef("%s: %v", aclFrom, err)
		}
		o.ACL = p
	}
	return o, nil
}

func (c *cli) connect(ctx context.Context, opts zkreg.Options) (*zkreg.Registry, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	reg, err := zkreg.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper %s: %w (point yrpcc ctl at your ZooKeeper with -zk HOST:PORT or $%s)", c.server, err, EnvServer)
	}
	return reg, nil
}

// apply writes e (or, with --dry-run, computes it) and prints the change.
func (c *cli) apply(ctx context.Context, reg *zkreg.Registry, e edit, f cmdFlags, opts zkreg.Options) error {
	var before, after registry.Config
	if f.dryRun {
		cur, err := reg.Config(ctx, e.key)
		if err != nil {
			return err
		}
		before, after = cur, cur.Clone()
		if err := e.fn(&after); err != nil {
			return err
		}
	} else {
		err := reg.UpdateConfig(ctx, e.key, func(cfg *registry.Config) error {
			before = cfg.Clone()
			if err := e.fn(cfg); err != nil {
				return err
			}
			after = cfg.Clone()
			return nil
		})
		if err != nil {
			return c.explainRefusal(err, e.key, opts)
		}
	}
	changes := diffConfig(before, after, c.Now())
	if len(changes) == 0 {
		fmt.Fprintf(c.Stdout, "%s: no change\n", e.key)
	}
	for _, ch := range changes {
		fmt.Fprintf(c.Stdout, "%s: %s\n", e.key, ch)
	}
	if f.dryRun {
		fmt.Fprintln(c.Stdout, "dry run: nothing written")
	}
	return nil
}

// explainRefusal tells an operator what to do when ZooKeeper (or the ACL
// policy) refused a write.
func (c *cli) explainRefusal(err error, key registry.Key, opts zkreg.Options) error {
	switch {
	case errors.Is(err, zkreg.ErrNoACL):
		return fmt.Errorf("%s has no nodes yet, and creating them needs the registry's roles: give them with --acl providers=ID,operators=ID or $%s (%w)", key, EnvACL, err)
	case !errors.Is(err, zk.ErrNoAuth):
		return err
	}
	who := refusedIdentity(opts, c.certID)
	if who == "" {
		return fmt.Errorf("ZooKeeper refused to write the config of %s (%w): the registry is locked down; give an operator's credentials with --auth digest:USER:PASSWORD or $%s, or an operator's client certificate with --zk-tls-cert and --zk-tls-key", key, zk.ErrNoAuth, EnvAuth)
	}
	return fmt.Errorf("ZooKeeper refused to write the config of %s (%w): %s may not write it; give an operator's", key, zk.ErrNoAuth, who)
}
