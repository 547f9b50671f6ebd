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

// ops is what the process has done so far that the runner counts per
// call: how many times its threads were put on a CPU (schedstat) and
// its read and write system calls (/proc/PID/io). ok is false when
// either cannot be read.
type ops struct {
	runs, syscalls int64
	ok             bool
}

// ops reads the process's ops.
func (p *proc) ops() ops {
	_, runs, err1 := procfs.Sched(p.cmd.Process.Pid)
	r, w, err2 := procfs.IO(p.cmd.Process.Pid)
	return ops{runs: runs, syscalls: r + w, ok: err1 == nil && err2 == nil}
}

// perCall returns the runs and system calls from o to o1 per call, or
// zeros when either reading failed.
func (o ops) perCall(o1 ops, calls float64) (runs, syscalls float64) {
	if !o.ok || !o1.ok || calls <= 0 {
		return 0, 0
	}
	return float64(o1.runs-o.runs) / calls, float64(o1.syscalls-o.syscalls) / calls
}
