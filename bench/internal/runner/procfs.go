package runner

import (
	"time"

	"github.com/yrpc/yrpc/bench/internal/procfs"
)

// cpu returns the CPU time (user + system) the process has used so far,
// read from /proc, or -1 when it cannot be read (not Linux, process gone).
// Read by the runner, it needs no help from the process, so binaries of
// other builds are measured the same way.
func (p *proc) cpu() time.Duration {
	d, err := procfs.CPU(p.cmd.Process.Pid)
	if err != nil {
		return -1
	}
	return d
}

// sched returns the CPU time of the process's threads in nanoseconds and
// how many times they were put on a CPU, from /proc/PID/task/*/schedstat;
// ok is false when they cannot be read.
func (p *proc) sched() (cpu time.Duration, runs int64, ok bool) {
	cpu, runs, err := procfs.Sched(p.cmd.Process.Pid)
	return cpu, runs, err == nil
}

// rss returns the process's resident set (VmRSS) and its peak (VmHWM) in
// MiB, read from /proc, or zeros when they cannot be read.
func (p *proc) rss() (now, peak float64) {
	now, peak, _ = procfs.Mem(p.cmd.Process.Pid)
	return now, peak
}
