package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux for every architecture Go supports).
const clockTick = 10 * time.Millisecond

// cpu returns the CPU time (user + system) the process has used so far,
// read from /proc, or -1 when it cannot be read (not Linux, process gone).
// Read by the runner, it needs no help from the process, so binaries of
// other builds are measured the same way.
func (p *proc) cpu() time.Duration {
	d, err := procCPU(p.cmd.Process.Pid)
	if err != nil {
		return -1
	}
	return d
}

// procCPU reads utime + stime of pid from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
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
		return 0, fmt.Errorf("runner: bad /proc stat line %q", stat)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("runner: short /proc stat line %q", stat)
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("runner: bad /proc stat field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}
