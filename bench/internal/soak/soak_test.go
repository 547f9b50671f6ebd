package soak

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/internal/zktest"
)

// providerEnv makes the test binary a provider process: the soak starts it
// with this variable set and the provider's flags.
const providerEnv = "SOAK_TEST_PROVIDER"

func TestMain(m *testing.M) {
	if os.Getenv(providerEnv) == "1" {
		if err := Provider(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestPlan(t *testing.T) {
	str := func(steps []step) []string {
		var out []string
		for _, s := range steps {
			out = append(out, fmt.Sprintf("%v %s %d", s.at, s.kind, s.provider))
		}
		return out
	}
	got := str(plan(20*time.Second, 4*time.Second, 3, true))
	want := []string{"4s graceful 0", "8s graceful 1", "10s zookeeper -1", "12s kill 0", "16s kill 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	full := plan(30*time.Minute, time.Minute, 3, true)
	kinds := map[string]int{}
	for _, s := range full {
		kinds[s.kind+" "+providerName(max(s.provider, 0))]++
		if s.at > 29*time.Minute || s.provider == 2 {
			t.Errorf("step %+v: none in the last minute, never p3", s)
		}
	}
	if diff := cmp.Diff(map[string]int{"graceful p1": 8, "kill p1": 7, "graceful p2": 7, "kill p2": 7, "zookeeper p1": 1}, kinds); diff != "" {
		t.Errorf("30 min plan (-want +got):\n%s", diff)
	}
	if got := str(plan(20*time.Second, 4*time.Second, 2, false)); len(got) != 4 || got[1] != "8s kill 0" || got[2] != "12s graceful 0" {
		t.Errorf("two providers, no ZooKeeper: %q", got)
	}
}

// TestReport checks the Put figures from put logs and the verdicts.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, ids string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(ids), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("p1.puts", "1\n2\n3\n")
	write("p2.puts", "3\n5\n")
	l := &load{getFail: map[string]int{}, putFail: map[string]int{"Unavailable": 2},
		failures: []Failure{{At: 30, Method: "Put", Code: "Unavailable"}, {At: 50.5, Method: "Put", Code: "Unavailable"}},
		// A freeze from 49.2 s to 50.1 s and a longer one that ended
		// before the second failure's timeout began.
		freezes: []Freeze{{At: 48, MS: 2000}, {At: 50.1, MS: 900}}}
	l.gets.Store(100)
	l.puts.Store(7)
	for _, id := range []int64{1, 2, 3, 4} { // 4 was acknowledged but never executed
		l.done(context.Background(), "Put", id, nil)
	}
	r := &Report{}
	for i := range 6 {
		at := float64(10 * (i + 1))
		r.Samples = append(r.Samples, Sample{At: at,
			Consumer:  ProcStats{RSS: 20, Goroutines: 40, Heap: 2},
			Providers: map[string]ProcStats{"p3": {RSS: 18 + 10*float64(i), Goroutines: 30, Heap: 1}}})
	}
	if err := r.finish(l, dir, map[string]time.Duration{"Put": time.Second}); err != nil {
		t.Fatal(err)
	}
	if r.Failures[0].FreezeMS != 0 || r.Failures[1].FreezeMS != 900 || len(r.Freezes) != 2 {
		t.Errorf("freezes during the failed calls: %+v, listed %+v", r.Failures, r.Freezes)
	}
	if r.AckedPuts != 4 || r.ExecutedPuts != 4 || r.DupPuts != 1 || r.LostPuts != 1 || r.Puts != 11 {
		t.Errorf("puts: acked %d executed %d dup %d lost %d total %d; want 4 4 1 1 11", r.AckedPuts, r.ExecutedPuts, r.DupPuts, r.LostPuts, r.Puts)
	}
	v := r.Verdicts()
	want := []string{
		"ok: failed idempotent calls (Get): 0 of 100",
		"info: failed non-idempotent calls (Put): 2 of 11 (Unavailable: 2)",
		"FAIL: duplicate effects: 1 Puts executed twice; 1 acknowledged Puts lost (4 acknowledged, 4 executed)",
	}
	if diff := cmp.Diff(want, v[:3]); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if len(v) != 5 || !strings.HasPrefix(v[3], "ok: consumer over 6 samples") || !strings.HasPrefix(v[4], "FAIL: p3 over 6 samples (10s-60s): RSS 18.0 → 68.0 MiB") {
		t.Errorf("flatness verdicts: %q", v[3:])
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Calls: 111 (100 Gets, 11 Puts)", "freezes of 200ms or more: 2 (the longest: 2000 ms at 48 s, 900 ms at 50 s)",
		"| 50.50 | Put | Unavailable | 900 |", "| at s | calls | get fail | put fail | consumer | p3 |", "| 60 | 0 | 0 | 0 | 20.0 / 40 / 2.00 | 68.0 / 30 / 1.00 |"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, b.String())
		}
	}
}

// TestSoak runs a short soak against a ZooKeeper of its own: three
// providers (this test binary), a restart every 4 s (graceful, then
// SIGKILL), ZooKeeper down for 2 s halfway, in a directory that holds an
// earlier soak's put log. No Get may fail, no Put may run twice or be
// lost, and every event must succeed. The calls get a 10 s
// timeout: the guarantee is that churn fails no idempotent call, and a 1 s
// call cannot survive the host freezing for a second, which loaded
// machines do.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ZooKeeper and processes")
	}
	zk := zktest.StartServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o := Options{
		Duration: 20 * time.Second, Churn: 4 * time.Second, Sample: 2 * time.Second, ZKDown: 2 * time.Second,
		ZK: zk.Addr(),
		RestartZK: func(down time.Duration) error {
			zk.Stop()
			time.Sleep(down) // ZooKeeper stays down this long: the fault itself
			zk.Start()
			return nil
		},
		Rate: 500, Timeout: 10 * time.Second, Session: 2 * time.Second, Dir: t.TempDir(),
		Command: []string{exe}, Env: append(os.Environ(), providerEnv+"=1"), Log: &log,
	}
	// The put log of an earlier soak in the same directory: Put ids start
	// at 1 again, so it must not count.
	if err := os.WriteFile(filepath.Join(o.Dir, "p1.puts"), []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, log.String())
	}
	var b bytes.Buffer
	r.WriteMarkdown(&b)
	t.Log("\n" + b.String())
	if n := total(r.GetFail); n != 0 || r.DupPuts != 0 || r.LostPuts != 0 {
		t.Errorf("%d Gets failed, %d Puts ran twice, %d were lost", n, r.DupPuts, r.LostPuts)
	}
	if len(r.Events) != 5 || len(r.Samples) < 8 || r.Gets < 2000 || r.AckedPuts == 0 {
		t.Errorf("%d events, %d samples, %d Gets, %d acknowledged Puts", len(r.Events), len(r.Samples), r.Gets, r.AckedPuts)
	}
	for _, e := range r.Events {
		if e.Error != "" {
			t.Errorf("event %+v", e)
		}
	}
	last := r.Samples[len(r.Samples)-1]
	if len(last.Providers) != 3 || last.Providers["p3"].Goroutines == 0 || last.Consumer.RSS == 0 {
		t.Errorf("last sample %+v", last)
	}
}
