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
	// IdleSeconds is how long each measurement's processes were kept
	// idle after their calls for ClientIdleCPU and ServerIdleCPU; 0: not
	// measured.
	IdleSeconds float64 `json:"idle_seconds,omitempty"`
	// Curves holds the settings of a cost-curve run ("bench curves"); nil
	// for the side-by-side run.
	Curves []Sweep `json:"curves,omitempty"`
}

// Sweep is one cost curve of a "bench curves" run: which figure varies,
// over which values, with which implementations, at which concurrency.
type Sweep struct {
	Name  string   `json:"name"` // SweepSize, SweepFanIn or SweepProviders
	X     []int    `json:"x"`    // the values of the varied figure
	C     int      `json:"c"`    // concurrent workers in the client process
	Impls []string `json:"impls"`
	// Calls is the counted calls per point; for SweepSize, the most
	// (smaller messages), with CallBytes bounding calls × size.
	Calls     int `json:"calls"`
	CallBytes int `json:"call_bytes,omitempty"`
}

// The sweeps of "bench curves".
const (
	SweepSize      = "size"      // Result.Size: request bytes
	SweepFanIn     = "fanin"     // Result.Conns: client connections against one server
	SweepProviders = "providers" // Result.Providers: servers behind one balancing client
)

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
	ClientCPU float64 `json:"client_cpu_us_per_call"`
	ServerCPU float64 `json:"server_cpu_us_per_call"`
	// ClientWakeups and ServerWakeups are how many times each process's
	// threads were put on a CPU over the counted calls
	// (/proc/PID/task/*/schedstat), and ClientSyscalls and
	// ServerSyscalls how many read and write system calls it made
	// (/proc/PID/io: sockets, and the runtime's own, such as its eventfd),
	// per call; 0 when unknown.
	ClientWakeups  float64 `json:"client_wakeups_per_call,omitempty"`
	ServerWakeups  float64 `json:"server_wakeups_per_call,omitempty"`
	ClientSyscalls float64 `json:"client_syscalls_per_call,omitempty"`
	ServerSyscalls float64 `json:"server_syscalls_per_call,omitempty"`
	Errors         int     `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	// Sweep names the cost curve of a "bench curves" point (SweepSize,
	// SweepFanIn, SweepProviders); "" in the side-by-side run. Size,
	// Conns and Providers are the point's request bytes (0: the
	// workload's 581), client connections (0: one) and server listeners,
	// each its own server (0: one).
	Sweep     string `json:"sweep,omitempty"`
	Size      int    `json:"size,omitempty"`
	Conns     int    `json:"conns,omitempty"`
	Providers int    `json:"providers,omitempty"`
	// ServerRSS and ServerPeakRSS are the server process's resident set
	// (VmRSS) right after the counted calls and its peak (VmHWM) over its
	// life, in MiB; 0 when unknown.
	ServerRSS     float64 `json:"server_rss_mib,omitempty"`
	ServerPeakRSS float64 `json:"server_peak_rss_mib,omitempty"`
	// ServerConns is how many connections the server process accepted
	// (warm-up and counted calls; on all its listeners); 0 when unknown
	// (a bench binary of an older build).
	ServerConns int `json:"server_conns,omitempty"`
	// ClientIdleCPU and ServerIdleCPU are the CPU each process used while
	// idle and connected after the counted calls ("bench run -idle"), as
	// a per cent of one core, and ClientIdleWakeups and ServerIdleWakeups
	// how many times per second its threads were put on a CPU meanwhile;
	// 0 when not measured.
	ClientIdleCPU     float64 `json:"client_idle_cpu_pct,omitempty"`
	ServerIdleCPU     float64 `json:"server_idle_cpu_pct,omitempty"`
	ClientIdleWakeups float64 `json:"client_idle_wakeups_per_sec,omitempty"`
	ServerIdleWakeups float64 `json:"server_idle_wakeups_per_sec,omitempty"`
}

// X returns the value that r's sweep varies (its size, connections or
// providers, each at least its default), or r.C outside a sweep.
func (r Result) X() int {
	switch r.Sweep {
	case SweepSize:
		return cmp.Or(r.Size, defaultSize)
	case SweepFanIn:
		return max(r.Conns, 1)
	case SweepProviders:
		return max(r.Providers, 1)
	}
	return r.C
}

// defaultSize is the workload's request size in bytes.
const defaultSize = 581

// point identifies the rows that Summarize merges: one implementation at
// one point of one sweep (or one c of the side-by-side run).
type point struct {
	sweep, impl           string
	c, size, conns, provs int
}

func pointOf(r Result) point { return point{r.Sweep, r.Impl, r.C, r.Size, r.Conns, r.Providers} }

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

// Summarize returns one row per implementation and point (c, or a sweep's
// point), ordered by sweep (in order of appearance), then c, then the
// sweep's value, then the implementations' order in impls.
func Summarize(results []Result, impls []string) []Result {
	groups := map[point][]Result{}
	var keys []point
	var sweeps []string
	for _, r := range results {
		k := pointOf(r)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		if !slices.Contains(sweeps, r.Sweep) {
			sweeps = append(sweeps, r.Sweep)
		}
		groups[k] = append(groups[k], r)
	}
	rank := func(impl string) int {
		if i := slices.Index(impls, impl); i >= 0 {
			return i
		}
		return len(impls)
	}
	slices.SortStableFunc(keys, func(a, b point) int {
		ra, rb := groups[a][0], groups[b][0]
		return cmp.Or(cmp.Compare(slices.Index(sweeps, a.sweep), slices.Index(sweeps, b.sweep)),
			cmp.Compare(a.c, b.c), cmp.Compare(ra.X(), rb.X()), cmp.Compare(rank(a.impl), rank(b.impl)))
	})
	out := make([]Result, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		s := Result{Impl: k.impl, Label: g[0].Label, Ref: g[0].Ref, TLS: g[0].TLS, C: k.c, Repeat: len(g),
			Sweep: k.sweep, Size: k.size, Conns: k.conns, Providers: k.provs}
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
		s.ClientWakeups = med(func(r Result) float64 { return r.ClientWakeups })
		s.ServerWakeups = med(func(r Result) float64 { return r.ServerWakeups })
		s.ClientSyscalls = med(func(r Result) float64 { return r.ClientSyscalls })
		s.ServerSyscalls = med(func(r Result) float64 { return r.ServerSyscalls })
		s.ServerRSS = med(func(r Result) float64 { return r.ServerRSS })
		s.ServerPeakRSS = med(func(r Result) float64 { return r.ServerPeakRSS })
		s.ServerConns = int(med(func(r Result) float64 { return float64(r.ServerConns) }))
		s.ClientIdleCPU = med(func(r Result) float64 { return r.ClientIdleCPU })
		s.ServerIdleCPU = med(func(r Result) float64 { return r.ServerIdleCPU })
		s.ClientIdleWakeups = med(func(r Result) float64 { return r.ClientIdleWakeups })
		s.ServerIdleWakeups = med(func(r Result) float64 { return r.ServerIdleWakeups })
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
