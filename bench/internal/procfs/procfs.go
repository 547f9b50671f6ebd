package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
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
	vals, err := values(status, "status", "VmRSS", "VmHWM")
	if err != nil {
		return 0, 0, err
	}
	var mib [2]float64
	for i, v := range vals {
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("procfs: bad /proc status value %q", v)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("procfs: bad /proc status value %q: %w", v, err)
		}
		mib[i] = float64(kb) / 1024
	}
	return mib[0], mib[1], nil
}

// values returns the values, trimmed, of keys in text, the "key: value"
// lines of a /proc file (what: "status", "io"), in the order of keys; it
// fails when one is missing.
func values(text, what string, keys ...string) ([]string, error) {
	vals := make([]string, len(keys))
	found := make([]bool, len(keys))
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if i := slices.Index(keys, key); ok && i >= 0 {
			vals[i], found[i] = strings.TrimSpace(val), true
		}
	}
	if slices.Contains(found, false) {
		return nil, fmt.Errorf("procfs: /proc %s without %s", what, strings.Join(keys, " and "))
	}
	return vals, nil
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
	vals, err := values(io, "io", "syscr", "syscw")
	if err != nil {
		return 0, 0, err
	}
	var n [2]int64
	for i, v := range vals {
		if n[i], err = strconv.ParseInt(v, 10, 64); err != nil || n[i] < 0 {
			return 0, 0, fmt.Errorf("procfs: bad /proc io value %q", v)
		}
	}
	return n[0], n[1], nil
}
