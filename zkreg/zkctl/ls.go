package zkctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// jsonKey is one key of `ls --json`.
type jsonKey struct {
	Service   string              `json:"service"`
	Group     string              `json:"group"`
	Version   string              `json:"version"`
	Providers []registry.Endpoint `json:"providers"`
	Consumers []registry.Endpoint `json:"consumers"`
	Config    registry.Config     `json:"config"`
	Skipped   []string            `json:"skipped,omitempty"`
}

func (c *cli) ls(ctx context.Context, reg *zkreg.Registry, f cmdFlags, words []string) error {
	all, err := reg.List(ctx)
	if err != nil {
		return err
	}
	ls := all
	if len(words) == 1 { // one service
		ls = slices.DeleteFunc(slices.Clone(all), func(l zkreg.Listing) bool { return l.Key.Service != words[0] })
	}
	if f.json.set {
		out := make([]jsonKey, 0, len(ls))
		for _, l := range ls {
			out = append(out, jsonKey{
				Service: l.Key.Service, Group: l.Key.Group, Version: l.Key.Version,
				Providers: orEmpty(l.Providers), Consumers: orEmpty(l.Consumers),
				Config: l.Config, Skipped: l.Skipped,
			})
		}
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	switch {
	case len(ls) > 0:
		writeTable(c.Stdout, ls, c.Now())
	case len(words) == 1: // a typo, or the wrong -root
		known := newCatalog(all).services(func(zkreg.Listing) bool { return true })
		fmt.Fprintf(c.Stdout, "no service %q under %s%s\n", words[0], c.root, didYouMean(words[0], known))
	default:
		fmt.Fprintf(c.Stdout, "no services under %s\n", c.root)
	}
	return nil
}

// orEmpty returns es with tokens redacted, and never nil.
func orEmpty(es []registry.Endpoint) []registry.Endpoint {
	out := make([]registry.Endpoint, len(es))
	for i, e := range es {
		out[i] = e.Redacted()
	}
	return out
}

// writeTable prints one row per endpoint and the config under each key.
func writeTable(w io.Writer, ls []zkreg.Listing, now time.Time) {
	if len(ls) == 0 {
		fmt.Fprintln(w, "no services")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tGROUP\tVERSION\tROLE\tADDR\tWEIGHT\tAPP\tTAGS\tAGE\tSTATE")
	for _, l := range ls {
		group, version := orDash(l.Key.Group), orDash(l.Key.Version)
		row := func(e registry.Endpoint, weight, state string) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Key.Service, group, version,
				e.Role, e.Addr, weight, orDash(e.App), tags(e.Tags), age(e.StartTime, now), state)
		}
		if len(l.Providers)+len(l.Consumers) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t\t\t\t\t\n", l.Key.Service, group, version)
		}
		seen := map[string]bool{}
		for _, e := range l.Providers {
			seen[e.Addr] = true
			ic := l.Config.Instances[e.Addr]
			row(e, weightCell(e.Weight, ic.Weight), state(ic))
		}
		for _, e := range l.Consumers {
			row(e, "", "")
		}
		// Overrides of instances that are not registered now.
		for _, addr := range slices.Sorted(maps.Keys(l.Config.Instances)) {
			if !seen[addr] {
				ic := l.Config.Instances[addr]
				row(registry.Endpoint{Role: "(absent)", Addr: addr}, weightCell(0, ic.Weight), state(ic))
			}
		}
		for _, line := range configLines(l.Config, now) {
			fmt.Fprintf(tw, "  %s\n", line)
		}
		for _, s := range l.Skipped {
			fmt.Fprintf(tw, "  skipped %s\n", s)
		}
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func tags(t map[string]string) string {
	if len(t) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(t))
	for _, k := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, k+"="+t[k])
	}
	return strings.Join(parts, ",")
}

// age formats how long ago t was, in whole seconds; "-" for the zero time.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String()
}

// weightCell shows the registered weight and an override ("100>50").
func weightCell(own, override int) string {
	s := "100"
	if own > 0 {
		s = strconv.Itoa(own)
	}
	if override > 0 {
		s += ">" + strconv.Itoa(override)
	}
	return s
}

func state(ic registry.InstanceConfig) string {
	if ic.Draining {
		return "draining"
	}
	return "serving"
}

// configLines describes the rate limit and mocks of a config.
func configLines(cfg registry.Config, now time.Time) []string {
	var out []string
	if cfg.RateLimit != nil {
		out = append(out, "limit: "+describeLimit(*cfg.RateLimit))
	}
	for _, m := range slices.Sorted(maps.Keys(cfg.Mocks)) {
		out = append(out, "mock "+m+": "+describeMock(cfg.Mocks[m], now))
	}
	return out
}

func describeLimit(rl registry.RateLimit) string {
	per := "per client IP"
	if rl.PerApp {
		per = "per app"
	}
	return fmt.Sprintf("%s/s burst %d %s", strconv.FormatFloat(rl.Rate, 'g', -1, 64), rl.Burst, per)
}

func describeMock(m registry.MockConfig, now time.Time) string {
	var b strings.Builder
	b.WriteString(m.Action)
	switch m.Action {
	case "fail":
		b.WriteString(" " + m.Code)
		if m.Message != "" {
			fmt.Fprintf(&b, " %q", m.Message)
		}
	case "value":
		fmt.Fprintf(&b, " %d bytes", len(m.Value))
	}
	if m.Force {
		b.WriteString(", forced")
	} else {
		b.WriteString(", on failure")
	}
	switch {
	case m.Expires.IsZero():
	case now.Before(m.Expires):
		fmt.Fprintf(&b, ", expires %s (in %s)", m.Expires.UTC().Format(time.RFC3339), m.Expires.Sub(now).Round(time.Second))
	default:
		fmt.Fprintf(&b, ", expired %s", m.Expires.UTC().Format(time.RFC3339))
	}
	return b.String()
}
