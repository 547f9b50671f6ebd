package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample() *File {
	var rs []Result
	add := func(impl string, ref bool, c, rep int, cps, p50, p99 float64) {
		rs = append(rs, Result{Impl: impl, Label: impl + " v1", Ref: ref, C: c, Repeat: rep, Calls: 1000,
			CallsPerSec: cps, P50: p50, P99: p99, P999: p99 * 2, ClientAllocs: 10, ServerAllocs: 12})
	}
	for rep := 1; rep <= 2; rep++ {
		d := float64(rep - 1) // the second repeat is a little faster
		add("yrpc", false, 1, rep, 10000+100*d, 90, 200)
		add("grpc", false, 1, rep, 4000+100*d, 227, 526)
		add("netrpc", false, 1, rep, 8700+100*d, 108, 202)
		add("tcp-pingpong", true, 1, rep, 30000, 28, 60)
		add("yrpc", false, 64, rep, 60000+100*d, 900, 3000)
		add("grpc", false, 64, rep, 17300, 3359, 9666)
		add("netrpc", false, 64, rep, 27000, 2151, 6874)
		add("tcp-pipeline", true, 64, rep, 1170000, 50, 100)
	}
	order := []string{"yrpc", "grpc", "netrpc", "tcp-pingpong", "tcp-pipeline"}
	return &File{
		Machine:  Machine{CPU: "Test CPU", Cores: 2, GoVersion: "go1.26.8", Kernel: "6.1", OSArch: "linux/amd64"},
		Settings: Settings{Impls: order, Conc: []int{1, 64}, Calls1: 1000, Calls: 1000, Warmup: 0.02, Repeats: 2, Procs: 2, YRPC: true},
		Results:  rs,
		Summary:  Summarize(rs, order),
	}
}

func TestSummarize(t *testing.T) {
	f := sample()
	var got []string
	for _, r := range f.Summary {
		got = append(got, r.Impl)
	}
	want := []string{"yrpc", "grpc", "netrpc", "tcp-pingpong", "yrpc", "grpc", "netrpc", "tcp-pipeline"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	y := f.Summary[0]
	if y.CallsPerSec != 10050 || y.Repeat != 2 || y.C != 1 || y.ClientAllocs != 10 {
		t.Errorf("yrpc c=1 summary = %+v, want the median of 10,000 and 10,100 over 2 repeats", y)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{4, 2}, 3}, {[]float64{9, 1, 5}, 5}, {[]float64{1, 9, 2, 8}, 5},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestThousands(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {999.4, "999"}, {999.6, "1,000"}, {17300, "17,300"}, {1170000, "1,170,000"}, {-1234, "-1,234"},
	}
	for _, tt := range tests {
		if got := Thousands(tt.in); got != tt.want {
			t.Errorf("Thousands(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	got := Compare(sample().Summary)
	want := []string{
		"c=1: yrpc 10,050 calls/s = 1.15× the best peer (netrpc, 8,750 calls/s); p50 0.83×, p99 0.99×",
		"c=1: yrpc vs tcp-pingpong: calls/s 0.34×, p50 3.21× (90.0 vs 28.0 µs)",
		"c=64: yrpc 60,050 calls/s = 2.22× the best peer (netrpc, 27,000 calls/s); p50 0.42×, p99 0.44×",
		"c=64: yrpc vs tcp-pipeline: calls/s 0.05×, p50 18.00× (900 vs 50.0 µs)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}

	var noYRPC []Result
	for _, r := range sample().Summary {
		if r.Impl != YRPC {
			noYRPC = append(noYRPC, r)
		}
	}
	got = Compare(noYRPC)
	if len(got) != 2 || !strings.Contains(got[0], "yrpc not measured; best peer netrpc 8,750") {
		t.Errorf("Compare without yrpc = %q", got)
	}
}

// TestCompareTLS: TLS rows are compared among themselves, never with the
// plaintext ones, and yrpc-tls with yrpc.
func TestCompareTLS(t *testing.T) {
	row := func(impl string, tls bool, cps, p50, p99, cliCPU, srvCPU float64) Result {
		return Result{Impl: impl, TLS: tls, C: 64, CallsPerSec: cps, P50: p50, P99: p99, ClientCPU: cliCPU, ServerCPU: srvCPU}
	}
	sum := []Result{
		row("yrpc", false, 60000, 900, 3000, 14, 12),
		row("grpc", false, 20000, 3000, 9000, 40, 35),
		row("yrpc-tls", true, 51000, 1000, 3300, 16.5, 14),
		row("grpc-tls", true, 17000, 3500, 9900, 45, 40),
	}
	variants := []Result{ // yrpc's variants are no peers
		row("yrpc-reuse", false, 70000, 800, 2800, 13, 11),
		row("yrpc@bench-old", false, 65000, 850, 2900, 13, 11),
		row("yrpc-tls@bench-old", true, 52000, 990, 3200, 16, 14),
	}
	want := []string{
		"c=64: yrpc 60,000 calls/s = 3.00× the best peer (grpc, 20,000 calls/s); p50 0.30×, p99 0.33×",
		"c=64: yrpc-tls 51,000 calls/s = 3.00× the best TLS peer (grpc-tls, 17,000 calls/s); p50 0.29×, p99 0.33×",
		"c=64: yrpc with TLS vs without: calls/s 0.85×, p50 1.11× (1,000 vs 900 µs), p99 1.10×; CPU µs per call: client 14.0 → 16.5, server 12.0 → 14.0",
	}
	if diff := cmp.Diff(want, Compare(sum)); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	// With yrpc's variants the best peer stays grpc; each variant gets a
	// line of its own beside yrpc.
	wantVariants := []string{
		want[0],
		"c=64: yrpc vs yrpc-reuse: calls/s 0.86×, p50 1.12×, p99 1.07×; CPU µs per call: client 14.0 vs 13.0, server 12.0 vs 11.0",
		"c=64: yrpc vs yrpc@bench-old: calls/s 0.92×, p50 1.06×, p99 1.03×; CPU µs per call: client 14.0 vs 13.0, server 12.0 vs 11.0",
		want[1],
		"c=64: yrpc-tls vs yrpc-tls@bench-old: calls/s 0.98×, p50 1.01×, p99 1.03×; CPU µs per call: client 16.5 vs 16.0, server 14.0 vs 14.0",
		want[2],
	}
	if diff := cmp.Diff(wantVariants, Compare(append(slices.Clone(sum), variants...))); diff != "" {
		t.Errorf("Compare with yrpc's variants (-want +got):\n%s", diff)
	}
	got := Compare(sum[1:]) // no plaintext yrpc: no TLS cost line
	if len(got) != 2 || !strings.Contains(got[0], "yrpc not measured; best peer grpc 20,000") {
		t.Errorf("Compare without yrpc = %q", got)
	}
}

func TestWriters(t *testing.T) {
	wantOutputs(t, sample(),
		output{"table", WriteTable, []string{"Test CPU, 2 cores", "calls/s", "tcp-pipeline", "1,170,000"}},
		output{"markdown", WriteMarkdown, []string{"| impl | c |", "| yrpc | 1 | 10,050 |", "- c=64: yrpc 60,050"}},
		output{"svg", WriteSVG, []string{"<svg", "c = 64", "yrpc v1", "60k", "1.17M"}})
}

// output is a writer of a File and what its output must hold.
type output struct {
	name  string
	write func(io.Writer, *File) error
	want  []string
}

// wantOutputs writes f with each writer of outs and checks that its
// output holds every string it wants.
func wantOutputs(t *testing.T, f *File, outs ...output) {
	t.Helper()
	for _, o := range outs {
		var b bytes.Buffer
		if err := o.write(&b, f); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		for _, w := range o.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", o.name, w, b.String())
			}
		}
	}
}

// markdownLacks checks that f's markdown does not hold s.
func markdownLacks(t *testing.T, f *File, s string) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteMarkdown(&b, f); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), s) {
		t.Errorf("markdown holds %q:\n%s", s, b.String())
	}
}

// TestIdleTable checks that a run with -idle summarizes each process's
// idle CPU (the median over repeats) and writes the idle table, and that
// a run without it writes none.
func TestIdleTable(t *testing.T) {
	f := sample()
	for i := range f.Results {
		r := &f.Results[i]
		r.ClientIdleCPU, r.ServerIdleCPU = float64(r.Repeat)/8, float64(r.Repeat)/4 // exact in binary
		r.ClientIdleWakeups, r.ServerIdleWakeups = 10*float64(r.Repeat), 20*float64(r.Repeat)
	}
	f.Summary = Summarize(f.Results, f.Settings.Impls)
	if y := f.Summary[0]; y.ClientIdleCPU != 0.1875 || y.ServerIdleCPU != 0.375 || y.ClientIdleWakeups != 15 || y.ServerIdleWakeups != 30 {
		t.Errorf("yrpc c=1 idle = %+v; want the medians 0.1875 %%, 0.375 %%, 15/s, 30/s", y)
	}
	markdownLacks(t, f, "idle CPU") // without -idle
	f.Settings.IdleSeconds = 10
	wantOutputs(t, f,
		output{"markdown", WriteMarkdown, []string{"connected and idle for 10s", "schedstat", "| impl | c | cli idle CPU % | srv idle CPU % | cli wake-ups/s | srv wake-ups/s |", "| yrpc | 64 | 0.188 | 0.375 | 15.0 | 30.0 |"}},
		output{"table", WriteTable, []string{"cli idle CPU %", "srv wake-ups/s", "0.188", "30.0"}})
}

// TestOpsTable: the wake-ups and system calls per call are medians over
// the repeats, and get a table of their own once measured.
func TestOpsTable(t *testing.T) {
	f := sample()
	markdownLacks(t, f, "wake-ups/call") // not measured
	for i := range f.Results {
		r := &f.Results[i]
		r.ClientWakeups, r.ServerWakeups = float64(r.Repeat)/8, float64(r.Repeat)/4 // exact in binary
		r.ClientSyscalls, r.ServerSyscalls = float64(r.Repeat)/2, float64(r.Repeat)
	}
	f.Summary = Summarize(f.Results, f.Settings.Impls)
	if y := f.Summary[0]; y.ClientWakeups != 0.1875 || y.ServerWakeups != 0.375 || y.ClientSyscalls != 0.75 || y.ServerSyscalls != 1.5 {
		t.Errorf("yrpc c=1 = %+v; want the medians 0.1875, 0.375, 0.75, 1.5", y)
	}
	wantOutputs(t, f,
		output{"markdown", WriteMarkdown, []string{"/proc/PID/io syscr + syscw", "| impl | c | cli wake-ups/call | srv wake-ups/call | cli read+write syscalls/call | srv read+write syscalls/call |", "| yrpc | 64 | 0.188 | 0.375 | 0.750 | 1.500 |"}},
		output{"table", WriteTable, []string{"cli wake-ups/call", "srv read+write syscalls/call", "0.188", "1.500"}})
}

// TestSVGWellFormed decodes the chart as XML, for full and empty results.
func TestSVGWellFormed(t *testing.T) {
	for _, f := range []*File{sample(), {}} {
		var b bytes.Buffer
		if err := WriteSVG(&b, f); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(&b)
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("chart is not well-formed XML: %v", err)
			}
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	f := sample()
	var b bytes.Buffer
	if err := WriteJSON(&b, f); err != nil {
		t.Fatal(err)
	}
	var back File
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, &back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 1: 1, 1.1: 2, 3: 5, 7: 10, 36000: 50000, 120000: 200000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
}
