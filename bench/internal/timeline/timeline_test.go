package timeline

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// phase returns a client timeline of 1,000 calls started every 100 µs
// from t0, each taking 100 µs but calls 480 to 489, which take 5 ms.
func phase(t0 int64) *File {
	f := &File{Role: "client", Impl: "x", C: 4}
	for i := range 1000 {
		took := 100 * time.Microsecond
		if i >= 480 && i < 490 {
			took = 5 * time.Millisecond
		}
		f.Starts = append(f.Starts, t0+int64(i)*int64(100*time.Microsecond))
		f.Took = append(f.Took, took)
	}
	return f
}

func TestWriteRead(t *testing.T) {
	f := phase(1e18)
	f.GCEnds = []int64{1e18 + 5e7, 1e18 + 9e7}
	path := filepath.Join(t.TempDir(), "x.client")
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Role != f.Role || g.Impl != f.Impl || g.C != f.C || !slices.Equal(g.Starts, f.Starts) || !slices.Equal(g.Took, f.Took) || !slices.Equal(g.GCEnds, f.GCEnds) {
		t.Errorf("read back %+v, wrote %+v", g, f)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "timeline client x\n", "timeline client x 4\ncall 1\n", "timeline client x 4\ngc 1 2\n", "timeline client x 4\nwhat 1\n", "timeline client x 4\ncall 1 y\n"} {
		if f, err := parse(strings.NewReader(in)); err == nil {
			t.Errorf("parse(%q) = %+v, want an error", in, f)
		}
	}
}

// TestAnalyze puts the slow calls (48.0 to 53.9 ms into the phase) over a
// client collection that ended 50 ms in, and a server collection 80 ms
// in, among calls that were all quick.
func TestAnalyze(t *testing.T) {
	const t0 = int64(1e18)
	ms := int64(time.Millisecond)
	cli := phase(t0)
	cli.GCEnds = []int64{t0 - 10*ms, t0 + 50*ms} // the first before the phase
	srv := &File{Role: "server", GCEnds: []int64{t0 + 80*ms}}
	s, err := Analyze(cli, srv, 3*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls != 1000 || s.Total != 1000 || s.P50 != 100*time.Microsecond || s.P99 != 5*time.Millisecond {
		t.Errorf("calls %d, p50 %v, p99 %v; want 1000, 100µs, 5ms", s.Calls, s.P50, s.P99)
	}
	if s.ClientGCs != 1 || s.ServerGCs != 1 {
		t.Errorf("collections during the phase: client %d, server %d; want 1 and 1", s.ClientGCs, s.ServerGCs)
	}
	// A call meets the window [47, 50] ms when it starts from 46.9 to 50
	// ms: 32 calls at 100 µs intervals (46.9 ... 50.0), the 10 slow ones
	// among them; [77, 80] ms likewise, none slow.
	want := struct{ all, slow [3]float64 }{[3]float64{0.032, 0.032, 0.064}, [3]float64{1, 0, 1}}
	for k := range 3 {
		if math.Abs(s.All[k]-want.all[k]) > 1e-9 || math.Abs(s.Slow[k]-want.slow[k]) > 1e-9 {
			t.Errorf("process %d: all %.3f slowest %.3f, want %.3f and %.3f", k, s.All[k], s.Slow[k], want.all[k], want.slow[k])
		}
	}
	if s.Bunched != 1 {
		t.Errorf("bunched %.2f, want 1: the slow calls all started within 1 ms", s.Bunched)
	}
	md := Markdown([]Summary{s}, 3*time.Millisecond)
	if !strings.Contains(md, "| x | 4 | 1000 | 100 | 5000 | 1 / 1 | 3 % → 100 % | 3 % → 0 % | 6 % → 100 % | 100 % |") {
		t.Errorf("markdown row missing:\n%s", md)
	}
}

// TestBunchedSpread: slow calls spread evenly over the phase (100 of
// them over 21 windows) are not bunched.
func TestBunchedSpread(t *testing.T) {
	f := &File{Impl: "x", C: 1}
	for i := range 10000 {
		took := 5 * time.Microsecond
		if i%100 == 0 {
			took = 50 * time.Microsecond
		}
		f.Starts = append(f.Starts, int64(i)*int64(10*time.Microsecond))
		f.Took = append(f.Took, took)
	}
	s, err := Analyze(f, nil, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if s.Bunched > 0.11 {
		t.Errorf("bunched %.2f for evenly spread slow calls, want 0.1 at most", s.Bunched)
	}
	if _, err := Analyze(&File{Impl: "x"}, nil, time.Millisecond); err == nil {
		t.Error("Analyze of no calls: no error")
	}
}

// TestAnalyzeOldestKnown: a server that knew only its last 256
// collections, the oldest 50 ms into the phase, leaves the calls before
// that out of the comparison.
func TestAnalyzeOldestKnown(t *testing.T) {
	const t0 = int64(1e18)
	cli := phase(t0)
	srv := &File{Role: "server"}
	for i := range 256 {
		srv.GCEnds = append(srv.GCEnds, t0+int64(50+i)*int64(time.Millisecond))
	}
	s, err := Analyze(cli, srv, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls != 500 || s.Total != 1000 {
		t.Errorf("compared %d calls of %d, want 500 of 1000", s.Calls, s.Total)
	}
	// Those ending from 50 to 101 ms: the phase ends at 100 ms, and a
	// collection is under way for the window (1 ms) before its end.
	if s.ServerGCs != 52 {
		t.Errorf("server collections during the phase: %d, want 52", s.ServerGCs)
	}
	if md := Markdown([]Summary{s}, time.Millisecond); !strings.Contains(md, "| x | 4 | 500 of 1000 |") {
		t.Errorf("markdown lacks the calls compared:\n%s", md)
	}
}
