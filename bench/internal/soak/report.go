package soak

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// ProcStats are one process's figures in a sample: resident set and live
// heap (after a GC) in MiB, goroutines, and for a provider its uptime in
// seconds. Zero when unknown.
type ProcStats struct {
	RSS        float64 `json:"rss_mib"`
	Goroutines int     `json:"goroutines"`
	Heap       float64 `json:"heap_mib"`
	Uptime     float64 `json:"uptime_s,omitempty"`
}

// Sample is one reading of every process.
type Sample struct {
	At        float64              `json:"at_s"`
	Calls     int64                `json:"calls"`
	GetFail   int                  `json:"get_fail"`
	PutFail   int                  `json:"put_fail"`
	Consumer  ProcStats            `json:"consumer"`
	Providers map[string]ProcStats `json:"providers"`
}

// Settings are a soak's parameters, as the report shows them.
type Settings struct {
	Duration  string `json:"duration"`
	Churn     string `json:"churn"`
	Sample    string `json:"sample"`
	ZK        string `json:"zookeeper"`
	ZKRestart bool   `json:"zookeeper_restart"`
	ZKDown    string `json:"zookeeper_down"`
	Providers int    `json:"providers"`
	Workers   int    `json:"workers"`
	Rate      int    `json:"rate"`
	Timeout   string `json:"call_timeout"`
	Session   string `json:"session_timeout"`
	Root      string `json:"zk_root"`
	Dir       string `json:"dir"`
}

func settingsOf(o Options, root string) Settings {
	timeout := o.Timeout.String()
	if o.Timeout <= 0 {
		t := o.timeouts()
		timeout = fmt.Sprintf("the schema's (Get %v, Put %v)", t["Get"], t["Put"])
	}
	return Settings{Duration: o.Duration.String(), Churn: o.Churn.String(), Sample: o.Sample.String(), ZK: o.ZK,
		ZKRestart: o.RestartZK != nil, ZKDown: o.ZKDown.String(), Providers: o.Providers, Workers: o.Workers, Rate: o.Rate,
		Timeout: timeout, Session: o.Session.String(), Root: root, Dir: o.Dir}
}

// Report is the outcome of a soak.
type Report struct {
	Settings Settings  `json:"settings"`
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"` // how long the load ran

	Gets int64 `json:"gets"`
	Puts int64 `json:"puts"`
	// GetFail and PutFail count failed calls by code; Failures lists the
	// first 200 failures.
	GetFail  map[string]int `json:"get_fail"`
	PutFail  map[string]int `json:"put_fail"`
	Failures []Failure      `json:"failures"`
	// AckedPuts succeeded for the caller; ExecutedPuts appear in the put
	// logs, DupPuts more than once, LostPuts (acknowledged) not at all.
	AckedPuts    int     `json:"acked_puts"`
	ExecutedPuts int     `json:"executed_puts"`
	DupPuts      int     `json:"dup_puts"`
	LostPuts     int     `json:"lost_puts"`
	Behind       int64   `json:"behind"`       // calls the pacer dropped because every worker was busy
	StallMaxMS   float64 `json:"stall_max_ms"` // longest freeze of the consumer process
	// Freezes lists the consumer process's freezes from 200 ms on (at
	// most 1,000).
	Freezes []Freeze `json:"freezes"`

	Events  []Event  `json:"events"`
	Samples []Sample `json:"samples"`
}

// finish fills the call and Put figures once the load and the providers
// have stopped; timeouts are the calls' timeouts by method, the window in
// which a freeze counts against a failed call.
func (r *Report) finish(l *load, dir string, timeouts map[string]time.Duration) error {
	r.Gets, r.Puts = l.gets.Load(), l.puts.Load()
	r.GetFail, r.PutFail, r.Failures, r.Freezes = l.counts()
	for i, f := range r.Failures {
		r.Failures[i].FreezeMS = longestFreeze(r.Freezes, f.At, timeouts[f.Method].Seconds())
	}
	r.Behind = l.behind.Load()
	r.StallMaxMS = float64(l.stallMax.Load()) / 1e6
	seen, err := readPutLogs(dir)
	if err != nil {
		return err
	}
	acked := l.acked()
	r.AckedPuts, r.ExecutedPuts = len(acked), len(seen)
	for _, n := range seen {
		if n > 1 {
			r.DupPuts++
		}
	}
	for _, id := range acked {
		if seen[id] == 0 {
			r.LostPuts++
		}
	}
	return nil
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// series is one process's figures over the samples.
type series struct {
	name string
	at   []float64
	st   []ProcStats
}

// seriesOf returns the consumer's series and each provider's, over the
// samples that have it.
func (r *Report) seriesOf() []series {
	out := []series{{name: "consumer"}}
	for _, s := range r.Samples {
		out[0].at = append(out[0].at, s.At)
		out[0].st = append(out[0].st, s.Consumer)
	}
	names := map[string]bool{}
	for _, s := range r.Samples {
		for n := range s.Providers {
			names[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		ps := series{name: n}
		for _, s := range r.Samples {
			if st, ok := s.Providers[n]; ok {
				ps.at = append(ps.at, s.At)
				ps.st = append(ps.st, st)
			}
		}
		out = append(out, ps)
	}
	return out
}

// Flat thresholds: the mean of the last third of the samples may exceed
// that of the first third by at most 30 % plus a slack.
const (
	flatRatio      = 1.3
	flatRSSMiB     = 5
	flatHeapMiB    = 1
	flatGoroutines = 10
)

// trend is one figure of one process: first and last sample, means of the
// first and last third, and whether it stays flat.
type trend struct {
	first, last, meanFirst, meanLast float64
	flat                             bool
}

func trendOf(vals []float64, slack float64) trend {
	t := trend{first: vals[0], last: vals[len(vals)-1]}
	third := max(len(vals)/3, 1)
	mean := func(v []float64) float64 {
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	t.meanFirst, t.meanLast = mean(vals[:third]), mean(vals[len(vals)-third:])
	t.flat = t.meanLast <= flatRatio*t.meanFirst+slack
	return t
}

// Verdicts returns the lines that judge the soak: failed Gets (must be
// 0), duplicate and lost Puts (must be 0), and per process whether RSS,
// goroutines and live heap stay flat.
func (r *Report) Verdicts() []string {
	var lines []string
	ok := func(good bool) string {
		if good {
			return "ok"
		}
		return "FAIL"
	}
	gf, pf := total(r.GetFail), total(r.PutFail)
	lines = append(lines,
		fmt.Sprintf("%s: failed idempotent calls (Get): %d of %d%s", ok(gf == 0), gf, r.Gets, codes(r.GetFail)),
		fmt.Sprintf("info: failed non-idempotent calls (Put): %d of %d%s", pf, r.Puts, codes(r.PutFail)),
		fmt.Sprintf("%s: duplicate effects: %d Puts executed twice; %d acknowledged Puts lost (%d acknowledged, %d executed)",
			ok(r.DupPuts == 0 && r.LostPuts == 0), r.DupPuts, r.LostPuts, r.AckedPuts, r.ExecutedPuts))
	for _, s := range r.seriesOf() {
		if len(s.st) < 3 {
			continue
		}
		pick := func(f func(ProcStats) float64) []float64 {
			v := make([]float64, len(s.st))
			for i, st := range s.st {
				v[i] = f(st)
			}
			return v
		}
		rss := trendOf(pick(func(p ProcStats) float64 { return p.RSS }), flatRSSMiB)
		gor := trendOf(pick(func(p ProcStats) float64 { return float64(p.Goroutines) }), flatGoroutines)
		heap := trendOf(pick(func(p ProcStats) float64 { return p.Heap }), flatHeapMiB)
		lines = append(lines, fmt.Sprintf("%s: %s over %d samples (%.0fs-%.0fs): RSS %.1f → %.1f MiB (thirds %.1f → %.1f), goroutines %.0f → %.0f (thirds %.1f → %.1f), live heap %.1f → %.1f MiB (thirds %.2f → %.2f)",
			ok(rss.flat && gor.flat && heap.flat), s.name, len(s.st), s.at[0], s.at[len(s.at)-1],
			rss.first, rss.last, rss.meanFirst, rss.meanLast, gor.first, gor.last, gor.meanFirst, gor.meanLast,
			heap.first, heap.last, heap.meanFirst, heap.meanLast))
	}
	return lines
}

// codes formats failure counts by code: " (Unavailable: 3, DeadlineExceeded: 1)".
func codes(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", c, m[c]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// WriteMarkdown writes the report for people: settings, verdicts, events,
// the listed failures and a sample per minute.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	s := r.Settings
	fmt.Fprintf(&b, "Soak started %s, load ran %.0f s: %d providers (p1..p%d restarted every %s in turn, gracefully and with SIGKILL in turn; p%d never), ZooKeeper %s restarted once for %s: %v; %d workers at %d calls/s, 1 call in 8 a Put; call timeout %s; ZooKeeper sessions %s.\n\n",
		r.Started.Format(time.RFC3339), r.Seconds, s.Providers, s.Providers-1, s.Churn, s.Providers, s.ZK, s.ZKDown, s.ZKRestart,
		s.Workers, s.Rate, s.Timeout, s.Session)
	calls := r.Gets + r.Puts
	fmt.Fprintf(&b, "Calls: %d (%d Gets, %d Puts), %.0f/s; calls the pacer dropped (every worker busy): %d; longest freeze of the consumer process: %.0f ms; freezes of %v or more: %d%s.\n\n",
		calls, r.Gets, r.Puts, float64(calls)/max(r.Seconds, 1), r.Behind, r.StallMaxMS, minFreeze, len(r.Freezes), freezeList(r.Freezes))
	for _, l := range r.Verdicts() {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\nEvents:\n\n| at s | event | provider | took s | error |\n|---|---|---|---|---|\n")
	for _, e := range r.Events {
		fmt.Fprintf(&b, "| %.0f | %s | %s | %.2f | %s |\n", e.At, e.Kind, e.Provider, e.Took, e.Error)
	}
	if len(r.Failures) > 0 {
		b.WriteString("\nFailed calls (at most 200 listed; freeze: the consumer's longest freeze during the call's timeout before it failed):\n\n| at s | method | code | freeze ms | error |\n|---|---|---|---|---|\n")
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "| %.2f | %s | %s | %.0f | %s |\n", f.At, f.Method, f.Code, f.FreezeMS, strings.ReplaceAll(f.Error, "|", "/"))
		}
	}
	b.WriteString("\nSamples (one a minute; RSS MiB / goroutines / live heap MiB):\n\n")
	series := r.seriesOf()
	b.WriteString("| at s | calls | get fail | put fail |")
	for _, s := range series {
		b.WriteString(" " + s.name + " |")
	}
	b.WriteString("\n|" + strings.Repeat("---|", 4+len(series)) + "\n")
	every := 1
	if len(r.Samples) > 1 {
		if step := r.Samples[1].At - r.Samples[0].At; step > 0 {
			every = max(int(60/step+0.5), 1)
		}
	}
	for i, smp := range r.Samples {
		if i%every != 0 && i != len(r.Samples)-1 {
			continue
		}
		fmt.Fprintf(&b, "| %.0f | %d | %d | %d | %s |", smp.At, smp.Calls, smp.GetFail, smp.PutFail, stats(smp.Consumer))
		for _, s := range series[1:] {
			if st, ok := smp.Providers[s.name]; ok {
				b.WriteString(" " + stats(st) + " |")
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// freezeList formats the longest freezes: " (the longest: 3710 ms at
// 1082 s, ...)", at most five.
func freezeList(fs []Freeze) string {
	if len(fs) == 0 {
		return ""
	}
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b Freeze) int { return cmp.Compare(b.MS, a.MS) })
	var parts []string
	for _, f := range fs[:min(len(fs), 5)] {
		parts = append(parts, fmt.Sprintf("%.0f ms at %.0f s", f.MS, f.At))
	}
	return " (the longest: " + strings.Join(parts, ", ") + ")"
}

func stats(p ProcStats) string {
	return fmt.Sprintf("%.1f / %d / %.2f", p.RSS, p.Goroutines, p.Heap)
}
