package zkctl

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// edit is a validated config change and what the checks against the
// registry need to know about it.
type edit struct {
	key registry.Key
	fn  func(*registry.Config) error
	// addr and method are the provider address and method the command
	// names ("" if none); the checks refuse ones no provider has.
	addr, method string
	// present reports, for a command that removes something (undrain,
	// weight 0, limit off, mock off), whether the config has it: removing
	// what is there needs no provider.
	present func(registry.Config) bool
	// rm is set for `rm`: it reports an error unless the config has the
	// entry to remove.
	rm func(registry.Config) error
}

// plan turns a command line into an edit, or a usage error.
func (c *cli) plan(ctx context.Context, cmd string, f cmdFlags, w []string) (edit, error) {
	k := registry.Key{Service: w[0], Group: f.group, Version: f.version}
	if err := nonEmpty(cmd, "SERVICE", k.Service); err != nil {
		return edit{}, err
	}
	switch cmd {
	case "drain", "undrain":
		if err := nonEmpty(cmd, "ADDR", w[1]); err != nil {
			return edit{}, err
		}
		return drain(k, w[1], cmd == "drain"), nil
	case "weight":
		if err := nonEmpty(cmd, "ADDR", w[1]); err != nil {
			return edit{}, err
		}
		return weight(k, w[1], w[2])
	case "limit":
		return limit(k, f, w[1:])
	case "mock":
		if err := nonEmpty(cmd, "METHOD", w[1]); err != nil {
			return edit{}, err
		}
		return c.mock(ctx, k, f, w[1], w[2], w[3:])
	case "rm":
		return remove(k, w[1:])
	}
	return edit{}, usagef("unknown command %q", cmd)
}

// nonEmpty refuses an empty (or blank) argument, which --force would
// otherwise write as a config entry that names nothing.
func nonEmpty(cmd, what, arg string) error {
	if strings.TrimSpace(arg) == "" {
		return usagef("%s: empty %s", cmd, what)
	}
	return nil
}

func drain(k registry.Key, addr string, on bool) edit {
	e := edit{key: k, addr: addr, fn: func(cfg *registry.Config) error {
		setInstance(cfg, addr, func(ic *registry.InstanceConfig) { ic.Draining = on })
		return nil
	}}
	if !on {
		e.present = func(cfg registry.Config) bool { return cfg.Instances[addr].Draining }
	}
	return e
}

func weight(k registry.Key, addr, arg string) (edit, error) {
	n, err := strconv.Atoi(arg)
	if err != nil {
		return edit{}, usagef("weight: bad weight %q (want an integer in 0..%d)", arg, registry.MaxWeight)
	}
	if err := registry.CheckWeight(n); err != nil {
		return edit{}, usagef("weight: bad weight: %v", err)
	}
	e := edit{key: k, addr: addr, fn: func(cfg *registry.Config) error {
		setInstance(cfg, addr, func(ic *registry.InstanceConfig) { ic.Weight = n })
		return nil
	}}
	if n == 0 {
		e.present = func(cfg registry.Config) bool { return cfg.Instances[addr].Weight != 0 }
	}
	return e, nil
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

func limit(k registry.Key, f cmdFlags, w []string) (edit, error) {
	if len(w) == 1 {
		if w[0] != "off" {
			return edit{}, usagef("limit: want RATE BURST or off, got %q", w[0])
		}
		return edit{key: k,
			fn:      func(cfg *registry.Config) error { cfg.RateLimit = nil; return nil },
			present: func(cfg registry.Config) bool { return cfg.RateLimit != nil },
		}, nil
	}
	rate, err := strconv.ParseFloat(w[0], 64)
	if err != nil {
		return edit{}, usagef("limit: bad rate %q (want a finite number > 0)", w[0])
	}
	burst, err := strconv.Atoi(w[1])
	if err != nil {
		return edit{}, usagef("limit: bad burst %q (want an integer >= 0)", w[1])
	}
	rl := registry.RateLimit{Rate: rate, Burst: burst, PerApp: f.perApp}
	if err := rl.Check(); err != nil {
		return edit{}, usagef("limit: bad rate limit: %v", err)
	}
	return edit{key: k, fn: func(cfg *registry.Config) error {
		cfg.RateLimit = &rl
		return nil
	}}, nil
}

func (c *cli) mock(ctx context.Context, k registry.Key, f cmdFlags, method, action string, rest []string) (edit, error) {
	e := edit{key: k, method: method}
	if action == "off" {
		if len(rest) != 0 {
			return edit{}, usagef("mock: off takes no arguments")
		}
		e.fn = func(cfg *registry.Config) error { deleteMock(cfg, method); return nil }
		e.present = func(cfg registry.Config) bool { _, ok := cfg.Mocks[method]; return ok }
		return e, nil
	}
	m := registry.MockConfig{Force: f.always}
	if f.force && !f.always {
		fmt.Fprintln(c.Stderr, "yrpcc ctl: note: --force skips the checks; this mock answers only failed calls (--always: every call)")
	}
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
	case "value":
		b, err := c.mockValue(ctx, k, f, method, rest)
		if err != nil {
			return edit{}, err
		}
		m.Action, m.Value = "value", b
	default:
		return edit{}, usagef("mock: unknown action %q (want empty, fail, value, value-hex or off)", action)
	}
	if f.forDur < 0 {
		return edit{}, usagef("mock: negative --for %v", f.forDur)
	}
	if f.forDur > 0 {
		m.Expires = c.Now().Add(f.forDur).UTC().Round(time.Second)
	}
	e.fn = func(cfg *registry.Config) error {
		if cfg.Mocks == nil {
			cfg.Mocks = make(map[string]registry.MockConfig)
		}
		cfg.Mocks[method] = m
		return nil
	}
	return e, nil
}

// mockValue encodes `value --json J --schema DIR` (J may also follow as a
// word).
func (c *cli) mockValue(ctx context.Context, k registry.Key, f cmdFlags, method string, rest []string) ([]byte, error) {
	js := f.json.text
	switch {
	case js == "" && len(rest) == 1 && f.json.set:
		js = rest[0]
	case len(rest) != 0 || !f.json.set || js == "":
		return nil, usagef("mock: value needs --json '{...}' (the response as JSON) and --schema DIR")
	}
	if f.schema == "" {
		return nil, usagef("mock: value needs --schema DIR, the schema package that declares %s", k.Service)
	}
	if c.MockValue == nil {
		return nil, usagef("mock: value needs yrpcc's schema loader; run it as yrpcc ctl")
	}
	b, err := c.MockValue(ctx, f.schema, k.Service, method, js)
	if err != nil {
		return nil, fmt.Errorf("mock: value of %s/%s: %w", k.Service, method, err)
	}
	return b, nil
}

func deleteMock(cfg *registry.Config, method string) {
	delete(cfg.Mocks, method)
	if len(cfg.Mocks) == 0 {
		cfg.Mocks = nil
	}
}

// remove plans `rm SERVICE limit|all|mock METHOD|instance ADDR`.
func remove(k registry.Key, w []string) (edit, error) {
	what, arg := w[0], ""
	if len(w) == 2 {
		arg = w[1]
	}
	needArg := what == "mock" || what == "instance"
	if needArg != (arg != "") {
		return edit{}, usagef("rm: want limit, all, mock METHOD or instance ADDR")
	}
	e := edit{key: k}
	switch what {
	case "limit":
		e.fn = func(cfg *registry.Config) error { cfg.RateLimit = nil; return nil }
		e.rm = func(cfg registry.Config) error {
			if cfg.RateLimit == nil {
				return refusalf("%s has no rate limit to remove", k)
			}
			return nil
		}
	case "all":
		e.fn = func(cfg *registry.Config) error { *cfg = registry.Config{}; return nil }
		e.rm = func(registry.Config) error { return nil } // checked: the config is not empty
	case "mock":
		e.fn = func(cfg *registry.Config) error { deleteMock(cfg, arg); return nil }
		e.rm = func(cfg registry.Config) error {
			if _, ok := cfg.Mocks[arg]; !ok {
				return refusalf("%s has no mock of %q to remove%s", k, arg, didYouMean(arg, slices.Sorted(maps.Keys(cfg.Mocks))))
			}
			return nil
		}
	case "instance":
		e.fn = func(cfg *registry.Config) error {
			delete(cfg.Instances, arg)
			if len(cfg.Instances) == 0 {
				cfg.Instances = nil
			}
			return nil
		}
		e.rm = func(cfg registry.Config) error {
			if _, ok := cfg.Instances[arg]; !ok {
				return refusalf("%s has no overrides of %q to remove%s", k, arg, didYouMean(arg, slices.Sorted(maps.Keys(cfg.Instances))))
			}
			return nil
		}
	default:
		return edit{}, usagef("rm: unknown entry %q (want limit, all, mock METHOD or instance ADDR)", what)
	}
	return e, nil
}

// diffConfig describes what changed from before to after, one line per
// entry: "limit: (none) -> 300/s burst 500 per client IP".
func diffConfig(before, after registry.Config, now time.Time) []string {
	var out []string
	if b, a := limitText(before.RateLimit), limitText(after.RateLimit); b != a {
		out = append(out, "limit: "+b+" -> "+a)
	}
	for _, addr := range unionKeys(before.Instances, after.Instances) {
		b, a := instanceText(before.Instances, addr), instanceText(after.Instances, addr)
		if b != a {
			out = append(out, "instance "+addr+": "+b+" -> "+a)
		}
	}
	for _, m := range unionKeys(before.Mocks, after.Mocks) {
		b, bok := before.Mocks[m]
		a, aok := after.Mocks[m]
		if bok == aok && (!aok || mockEqual(a, b)) {
			continue
		}
		out = append(out, "mock "+m+": "+mockText(b, bok, now)+" -> "+mockText(a, aok, now))
	}
	return out
}

// unionKeys returns the keys of a and b, sorted, once each.
func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}

const none = "(none)"

func limitText(rl *registry.RateLimit) string {
	if rl == nil {
		return none
	}
	return describeLimit(*rl)
}

func instanceText(m map[string]registry.InstanceConfig, addr string) string {
	ic, ok := m[addr]
	if !ok {
		return none
	}
	s := state(ic)
	if ic.Weight > 0 {
		s += ", weight " + strconv.Itoa(ic.Weight)
	}
	return s
}

func mockText(m registry.MockConfig, ok bool, now time.Time) string {
	if !ok {
		return none
	}
	return describeMock(m, now)
}

func mockEqual(a, b registry.MockConfig) bool {
	return a.Force == b.Force && a.Action == b.Action && bytes.Equal(a.Value, b.Value) &&
		a.Code == b.Code && a.Message == b.Message && a.Expires.Equal(b.Expires)
}
