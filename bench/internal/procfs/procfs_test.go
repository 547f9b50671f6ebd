package procfs

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// utime 250 and stime 50 ticks; the name holds spaces and a ')'.
	line := "4242 (bench (x) y) S 1 4242 4242 0 -1 4194560 800 0 0 0 250 50 0 0 20 0 4 0 100 0 0"
	got, err := parseStatCPU(line)
	if err != nil || got != 3*time.Second {
		t.Fatalf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	if _, err := parseStatCPU("4242 (x) S 1"); err == nil {
		t.Fatal("short line: no error")
	}
	if d, err := CPU(os.Getpid()); err != nil || d < 0 {
		t.Fatalf("CPU(self) = %v, %v", d, err)
	}
}

func TestParseStatusRSS(t *testing.T) {
	status := "Name:\tbench\nVmPeak:\t  900000 kB\nVmHWM:\t   40960 kB\nVmRSS:\t   20480 kB\nThreads:\t5\n"
	rss, hwm, err := parseStatusRSS(status)
	if err != nil || rss != 20 || hwm != 40 {
		t.Fatalf("parseStatusRSS = %v, %v, %v; want 20, 40 MiB", rss, hwm, err)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t1 MB\nVmHWM:\t1 kB\n", "VmRSS:\tx kB\nVmHWM:\t1 kB\n"} {
		if _, _, err := parseStatusRSS(bad); err == nil {
			t.Errorf("parseStatusRSS(%q): no error", bad)
		}
	}
	if rss, hwm, err := Mem(os.Getpid()); err != nil || rss <= 0 || hwm < rss {
		t.Errorf("Mem(self) = %v, %v, %v", rss, hwm, err)
	}
}

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		line    string
		cpu     time.Duration
		runs    int64
		wantErr bool
	}{
		{"3134920 508924 2\n", 3134920, 2, false},
		{"0 0 0", 0, 0, false},
		{"1 2", 0, 0, true},
		{"x 2 3", 0, 0, true},
		{"1 2 -3", 0, 0, true},
	}
	for _, tt := range tests {
		cpu, runs, err := parseSchedstat(tt.line)
		if (err != nil) != tt.wantErr || cpu != tt.cpu || runs != tt.runs {
			t.Errorf("parseSchedstat(%q) = %v, %d, %v; want %v, %d, error %v", tt.line, cpu, runs, err, tt.cpu, tt.runs, tt.wantErr)
		}
	}
}

// TestSched reads this process: it has run, at least once, on at least
// one thread.
func TestSched(t *testing.T) {
	cpu, runs, err := Sched(os.Getpid())
	if err != nil {
		t.Skipf("no schedstat here: %v", err)
	}
	if cpu <= 0 || runs <= 0 {
		t.Errorf("Sched(self) = %v, %d; want both positive", cpu, runs)
	}
}

func TestParseIO(t *testing.T) {
	tests := []struct {
		file          string
		reads, writes int64
		wantErr       bool
	}{
		{"rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 3\nread_bytes: 0\n", 10, 3, false},
		{"syscw: 0\nsyscr: 0", 0, 0, false},
		{"syscr: 10\n", 0, 0, true},
		{"syscr: x\nsyscw: 1\n", 0, 0, true},
		{"syscr: -1\nsyscw: 1\n", 0, 0, true},
		{"", 0, 0, true},
	}
	for _, tt := range tests {
		r, w, err := parseIO(tt.file)
		if (err != nil) != tt.wantErr || r != tt.reads || w != tt.writes {
			t.Errorf("parseIO(%q) = %d, %d, %v; want %d, %d, error %v", tt.file, r, w, err, tt.reads, tt.writes, tt.wantErr)
		}
	}
}

// TestIO reads this process's counts around a read and a write of its
// own: each grows by at least one.
func TestIO(t *testing.T) {
	r0, w0, err := IO(os.Getpid())
	if err != nil {
		t.Skipf("no /proc/PID/io here: %v", err)
	}
	f, err := os.CreateTemp(t.TempDir(), "io")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); err != nil {
		t.Fatal(err)
	}
	r1, w1, err := IO(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if r1 <= r0 || w1 <= w0 {
		t.Errorf("IO(self): reads %d -> %d, writes %d -> %d; want both to grow", r0, r1, w0, w1)
	}
}
