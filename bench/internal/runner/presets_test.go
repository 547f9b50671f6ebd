package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/report"
)

func TestPresetArgs(t *testing.T) {
	p := preset{impls: []string{"feed/yrpc", "feed/grpc", "nope"}, conc: "1,64", out: "results/x"}
	impls := "feed/grpc"
	if impl.Has("feed/yrpc") {
		impls = "feed/yrpc,feed/grpc"
	}
	tests := []struct {
		args []string
		want []string
	}{
		{nil, []string{"-impls", impls, "-c", "1,64", "-out", "results/x"}},
		{[]string{"-quick"}, []string{"-impls", impls, "-c", "1,64", "-out", filepath.Join("results/x", "quick")}},
		{[]string{"--quick=true", "-n", "5"}, []string{"-impls", impls, "-c", "1,64", "-out", filepath.Join("results/x", "quick")}},
		{[]string{"-quick=1"}, []string{"-impls", impls, "-c", "1,64", "-out", filepath.Join("results/x", "quick")}},
		{[]string{"-quick=false"}, []string{"-impls", impls, "-c", "1,64", "-out", "results/x"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, p.args(tt.args)); diff != "" {
			t.Errorf("args(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestStreamsRun runs the streams preset with a few messages: every row
// measured without errors, the feed rows with FeedScale times the calls,
// and yrpc compared within each group when it is compiled in.
func TestStreamsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	args := []string{"-bin", exe, "-n1", "20", "-n", "40", "-repeats", "1", "-out", dir, "-timeout", "1m"}
	if err := Streams(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("streams: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f report.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range f.Summary {
		if !slices.Contains(names, r.Impl) {
			names = append(names, r.Impl)
		}
		want := map[int]int{1: 20, 64: 40}[r.C]
		if strings.HasPrefix(r.Impl, "feed/") {
			want *= impl.FeedScale
		}
		if r.Errors != 0 || r.Calls != want || r.CallsPerSec <= 0 {
			t.Errorf("row %s c=%d: %d calls (want %d), %.0f calls/s, %d errors %s", r.Impl, r.C, r.Calls, want, r.CallsPerSec, r.Errors, r.FirstError)
		}
	}
	want := slices.DeleteFunc(slices.Clone(streamsPreset.impls), func(n string) bool { return !impl.Has(n) })
	if !slices.Equal(names, want) {
		t.Errorf("rows %q, want %q", names, want)
	}
	if impl.Has("feed/yrpc") {
		for _, line := range []string{"c=64 feed: yrpc vs drpc", "c=64 echo: yrpc vs grpc"} {
			if !strings.Contains(stdout.String(), line) {
				t.Errorf("output lacks %q:\n%s", line, stdout.String())
			}
		}
	}
}
