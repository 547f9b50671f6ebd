package report

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"time"
)

// Machine describes where the benchmark ran.
type Machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	GoVersion string `json:"go_version"`
	Kernel    string `json:"kernel"`
	OSArch    string `json:"os_arch"`
	// LoadStart and LoadEnd are /proc/loadavg's 1, 5 and 15 minute load
	// averages when the run started and ended: other work on the machine
	// skews every figure.
	LoadStart string `json:"load_start,omitempty"`
	LoadEnd   string `json:"load_end,omitempty"`
}

// Settings are the run's parameters.
type Settings struct {
	Impls    []string `json:"impls"`
	Conc     []int    `json:"concurrency"`
	Calls1   int      `json:"calls_c1"`      // counted calls at c = 1
	Calls    int      `json:"calls"`         // counted calls at c > 1
	Warmup   float64  `json:"warmup_frac"`   // warm-up calls as a fraction of the counted ones
	Repeats  int      `json:"repeats"`       // every implementation runs once per repeat and c
	Procs    int      `json:"gomaxprocs"`    // GOMAXPROCS of server and client processes
	Quick    bool     `json:"quick"`         // a smoke run; numbers mean little
	YRPC     bool     `json:"yrpc_included"` // built with the "yrpc" tag
	Versions []string `json:"versions"`      // label of every implementation
}

// Result is one measurement: one implementation at one concurrency in one
// repeat. Latencies are in microseconds; allocations and bytes are per
// counted call, from runtime.MemStats deltas of each process.
type Result struct {
	Impl         string  `json:"impl"`
	Label        string  `json:"label"`
	Ref          bool    `json:"ref,omitempty"`
	TLS          bool    `json:"tls,omitempty"` // over mutual TLS (yrpc-tls, grpc-tls)
	C            int     `json:"c"`
	Repeat       int     `json:"repeat"`
	Calls        int     `json:"calls"`
	Seconds      float64 `json:"seconds"`
	CallsPerSec  float64 `json:"calls_per_sec"`
	P50          float64 `json:"p50_us"`
	P99          float64 `json:"p99_us"`
	P999         float64 `json:"p999_us"`
	Mean         float64 `json:"mean_us"`
	Max          float64 `json:"max_us"`
	ClientAllocs float64 `json:"client_allocs_per_call"`
	ClientBytes  float64 `json:"client_bytes_per_call"`
	ServerAllocs float64 `json:"server_allocs_per_call"`
	ServerBytes  float64 `json:"server_bytes_per_call"`
	// ClientCPU and ServerCPU are each process's CPU time (user + system,
	// from /proc) over the counted calls, in µs per call; 0 when unknown.
	ClientCPU  float64 `json:"client_cpu_us_per_call"`
	ServerCPU  float64 `json:"server_cpu_us_per_call"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
}

// File is the content of results.json.
type File struct {
	Machine  Machine   `json:"machine"`
	Settings Settings  `json:"settings"`
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"duration_seconds"`
	// Results holds every measurement; Summary one row per implementation
	// and c, each figure the median over the repeats (the mean of the two
	// middle values for an even count), Errors the sum and Repeat the
	// number of repeats.
	Results []Result `json:"results"`
	Summary []Result `json:"summary"`
}

// WriteJSON writes f as indented JSON.
func WriteJSON(w io.Writer, f *File) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// Summarize returns one row per implementation and c, ordered by c and
// then by the implementations' order in impls.
func Summarize(results []Result, impls []string) []Result {
	type key struct {
		impl string
		c    int
	}
	groups := map[key][]Result{}
	var keys []key
	for _, r := range results {
		k := key{r.Impl, r.C}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	rank := func(impl string) int {
		if i := slices.Index(impls, impl); i >= 0 {
			return i
		}
		return len(impls)
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.c, b.c), cmp.Compare(rank(a.impl), rank(b.impl)))
	})
	out := make([]Result, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		s := Result{Impl: k.impl, Label: g[0].Label, Ref: g[0].Ref, TLS: g[0].TLS, C: k.c, Repeat: len(g)}
		med := func(f func(Result) float64) float64 {
			v := make([]float64, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			return median(v)
		}
		s.Calls = int(med(func(r Result) float64 { return float64(r.Calls) }))
		s.Seconds = med(func(r Result) float64 { return r.Seconds })
		s.CallsPerSec = med(func(r Result) float64 { return r.CallsPerSec })
		s.P50 = med(func(r Result) float64 { return r.P50 })
		s.P99 = med(func(r Result) float64 { return r.P99 })
		s.P999 = med(func(r Result) float64 { return r.P999 })
		s.Mean = med(func(r Result) float64 { return r.Mean })
		s.Max = med(func(r Result) float64 { return r.Max })
		s.ClientAllocs = med(func(r Result) float64 { return r.ClientAllocs })
		s.ClientBytes = med(func(r Result) float64 { return r.ClientBytes })
		s.ServerAllocs = med(func(r Result) float64 { return r.ServerAllocs })
		s.ServerBytes = med(func(r Result) float64 { return r.ServerBytes })
		s.ClientCPU = med(func(r Result) float64 { return r.ClientCPU })
		s.ServerCPU = med(func(r Result) float64 { return r.ServerCPU })
		for _, r := range g {
			s.Errors += r.Errors
			if s.FirstError == "" {
				s.FirstError = r.FirstError
			}
		}
		out = append(out, s)
	}
	return out
}

// median returns the median of v, which it sorts; 0 for an empty slice.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
