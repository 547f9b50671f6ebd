package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux for every architecture Go supports).
const clockTick = 10 * time.Millisecond

// CPU returns the CPU time (user + system) process pid has used so far,
// from fields 14 and 15 of /proc/PID/stat.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads fields 14 and 15 (utime, stime) of a /proc/PID/stat
// line. The command name, field 2, is in parentheses and may hold spaces,
// so fields are counted after its closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("procfs: bad /proc stat line %q", stat)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("procfs: short /proc stat line %q", stat)
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("procfs: bad /proc stat field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// Mem returns the resident set (VmRSS) of process pid and its peak
// (VmHWM) in MiB, read from /proc/PID/status.
func Mem(pid int) (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStatusRSS(string(b))
}

// parseStatusRSS reads the VmRSS and VmHWM lines ("VmRSS:  1234 kB") of a
// /proc/PID/status file, in MiB.
func parseStatusRSS(status string) (rss, hwm float64, err error) {
	found := 0
	for _, line := range strings.Split(status, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("procfs: bad /proc status line %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("procfs: bad /proc status line %q: %w", line, err)
		}
		if key == "VmRSS" {
			rss = float64(kb) / 1024
		} else {
			hwm = float64(kb) / 1024
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("procfs: /proc status without VmRSS and VmHWM")
	}
	return rss, hwm, nil
}

// Sched returns the CPU time process pid's threads have run so far, in
// nanoseconds (not clock ticks), and how many times they were put on a
// CPU, from /proc/PID/task/*/schedstat (run time, wait time, timeslices).
// Threads that have exited are not counted: over a window in which none
// exits, the differences are what the process ran and how often it woke.
func Sched(pid int) (cpu time.Duration, runs int64, err error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return 0, 0, err
		}
		c, n, err := parseSchedstat(string(b))
		if err != nil {
			return 0, 0, err
		}
		cpu += c
		runs += n
	}
	return cpu, runs, nil
}

// parseSchedstat reads a schedstat line: nanoseconds on a CPU,
// nanoseconds waiting for one, timeslices run.
func parseSchedstat(line string) (time.Duration, int64, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return 0, 0, fmt.Errorf("procfs: bad schedstat line %q", line)
	}
	ns, err1 := strconv.ParseInt(f[0], 10, 64)
	n, err2 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil || ns < 0 || n < 0 {
		return 0, 0, fmt.Errorf("procfs: bad schedstat line %q", line)
	}
	return time.Duration(ns), n, nil
}

// IO returns how many read and write system calls process pid has made
// so far (the syscr and syscw lines of /proc/PID/io: read, readv, recvfrom,
// recvmsg and their kin; write, writev, sendto, sendmsg and theirs).
// Reading another process's file needs the right to trace it (the same
// user, as for the bench's own children).
func IO(pid int) (reads, writes int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseIO(string(b))
}

// parseIO reads the syscr and syscw lines ("syscr: 10") of a /proc/PID/io
// file.
func parseIO(io string) (reads, writes int64, err error) {
	found := 0
	for _, line := range strings.Split(io, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || key != "syscr" && key != "syscw" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("procfs: bad /proc io line %q", line)
		}
		if key == "syscr" {
			reads = n
		} else {
			writes = n
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("procfs: /proc io without syscr and syscw")
	}
	return reads, writes, nil
}
