package zkctl

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// refusal is a command the checks refuse; --force overrides it.
type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg + " (--force writes it anyway)" }

func refusalf(format string, args ...any) error { return refusal{fmt.Sprintf(format, args...)} }

// catalog is what is registered, by service: the keys with providers or
// consumers ("live") and the keys with config.
type catalog struct {
	keys map[registry.Key]zkreg.Listing
}

func newCatalog(ls []zkreg.Listing) catalog {
	c := catalog{keys: make(map[registry.Key]zkreg.Listing, len(ls))}
	for _, l := range ls {
		c.keys[l.Key] = l
	}
	return c
}

func live(l zkreg.Listing) bool { return len(l.Providers)+len(l.Consumers) > 0 }

// services returns the services that have a key for which keep holds.
func (c catalog) services(keep func(zkreg.Listing) bool) []string {
	var out []string
	for k, l := range c.keys {
		if keep(l) {
			out = append(out, k.Service)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// keysOf returns the keys of service for which keep holds, sorted.
func (c catalog) keysOf(service string, keep func(zkreg.Listing) bool) []registry.Key {
	var out []registry.Key
	for k, l := range c.keys {
		if k.Service == service && keep(l) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b registry.Key) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version))
	})
	return out
}

// check refuses e when it names what no registered provider has: an
// unknown service, a group or version without providers or consumers, an
// address that is not a provider of the key, or a method its providers do
// not list. Removing what the config holds needs no provider. Notes (a
// method that could not be checked) go to notes.
func (e edit) check(c catalog, notes io.Writer) error {
	l, ok := c.keys[e.key]
	if e.rm != nil {
		if !ok || l.Config.IsZero() {
			return c.unknownKey(e.key, func(l zkreg.Listing) bool { return !l.Config.IsZero() }, "config")
		}
		return e.rm(l.Config)
	}
	if e.present != nil && e.present(l.Config) {
		return nil
	}
	if !live(l) {
		return c.unknownKey(e.key, live, "providers")
	}
	if e.addr != "" && !slices.ContainsFunc(l.Providers, func(p registry.Endpoint) bool { return p.Addr == e.addr }) {
		addrs := make([]string, 0, len(l.Providers))
		for _, p := range l.Providers {
			addrs = append(addrs, p.Addr)
		}
		if len(addrs) == 0 {
			return refusalf("%s has no providers, so none at %q", e.key, e.addr)
		}
		return refusalf("%s has no provider at %q%s", e.key, e.addr, didYouMean(e.addr, addrs))
	}
	if e.method != "" {
		var methods []string
		for _, p := range l.Providers {
			methods = append(methods, p.Methods...)
		}
		slices.Sort(methods)
		methods = slices.Compact(methods)
		switch {
		case len(methods) == 0:
			fmt.Fprintf(notes, "yrpcc ctl: note: the providers of %s publish no method list (an older yrpc); method %q not checked\n", e.key, e.method)
		case !slices.Contains(methods, e.method):
			return refusalf("%s has no method %q%s", e.key, e.method, didYouMean(e.method, methods))
		}
	}
	return nil
}

// unknownKey refuses key, which has no what (providers or config): it
// names the service's keys that have, or the close services.
func (c catalog) unknownKey(key registry.Key, keep func(zkreg.Listing) bool, what string) error {
	keys := c.keysOf(key.Service, keep)
	if len(keys) == 0 {
		if len(c.keysOf(key.Service, live)) > 0 {
			return refusalf("%s has no %s", key.Service, what)
		}
		known := c.services(live)
		return refusalf("unknown service %q: no provider or consumer of it is registered%s", key.Service, didYouMean(key.Service, known))
	}
	where := make([]string, len(keys))
	for i, k := range keys {
		where[i] = location(k) + " (" + flags(k) + ")"
	}
	return refusalf("%s has no %s in %s; it has %s in %s", key.Service, what, location(key), what, strings.Join(where, ", "))
}

// location names a key's group and version in words.
func location(k registry.Key) string {
	switch {
	case k.Group == "" && k.Version == "":
		return "the default group and version"
	case k.Version == "":
		return "group " + strconv.Quote(k.Group)
	case k.Group == "":
		return "the default group, version " + strconv.Quote(k.Version)
	}
	return "group " + strconv.Quote(k.Group) + " version " + strconv.Quote(k.Version)
}

// flags returns the command-line flags that select k.
func flags(k registry.Key) string {
	var f []string
	if k.Group != "" {
		f = append(f, "--group "+k.Group)
	}
	if k.Version != "" {
		f = append(f, "--version "+k.Version)
	}
	if len(f) == 0 {
		return "no --group or --version"
	}
	return strings.Join(f, " ")
}

// didYouMean suggests the names of known closest to name ("; did you
// mean "a"?"), or lists known when none is close.
func didYouMean(name string, known []string) string {
	if m := closeMatches(name, known); len(m) > 0 {
		return "; did you mean " + orList(m) + "?"
	}
	const show = 6
	switch {
	case len(known) == 0:
		return ""
	case len(known) <= show:
		return "; known: " + strings.Join(quoteAll(known), ", ")
	}
	return fmt.Sprintf("; known: %s and %d more", strings.Join(quoteAll(known[:show]), ", "), len(known)-show)
}

// closeMatches returns up to three names of known within an edit
// distance of a third of name's length (at least 1, case ignored), closest
// first; only those that differ in case, if any do.
func closeMatches(name string, known []string) []string {
	type match struct {
		s string
		d int
	}
	limit := max(1, len([]rune(name))/3)
	var ms []match
	for _, k := range known {
		if d := distance(strings.ToLower(name), strings.ToLower(k)); d <= limit && k != name {
			ms = append(ms, match{k, d})
		}
	}
	slices.SortFunc(ms, func(a, b match) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.s, b.s)) })
	if len(ms) > 0 && ms[0].d == 0 { // only the case differs: that is the one
		ms = slices.DeleteFunc(ms, func(m match) bool { return m.d > 0 })
	}
	out := make([]string, 0, 3)
	for _, m := range ms[:min(3, len(ms))] {
		out = append(out, m.s)
	}
	return out
}

// distance is the optimal string alignment distance of a and b: the
// insertions, deletions, substitutions and transpositions of adjacent
// runes that turn a into b.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2, prev, cur := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
}

// orList joins quoted names: "a", "b" or "c".
func orList(s []string) string {
	q := quoteAll(s)
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
