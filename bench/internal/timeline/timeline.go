package timeline

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// File is one process's timeline of a counted phase.
type File struct {
	Role string // "client" or "server"
	Impl string // the implementation measured
	C    int    // its concurrency
	// Starts and Took are the client's calls in the order they were made:
	// call i started at Starts[i] (Unix nanoseconds) and took Took[i].
	Starts []int64
	Took   []time.Duration
	// GCEnds holds when the process's collections ended (Unix
	// nanoseconds), oldest first: the last 256 at most.
	GCEnds []int64
}

// GCEnds returns the end times of the collections m records, oldest
// first.
func GCEnds(m *runtime.MemStats) []int64 {
	n := min(m.NumGC, uint32(len(m.PauseEnd)))
	ends := make([]int64, 0, n)
	for i := n; i > 0; i-- {
		ends = append(ends, int64(m.PauseEnd[(m.NumGC-i)%uint32(len(m.PauseEnd))]))
	}
	return ends
}

// Write writes f to path as text: a header line "timeline ROLE IMPL C",
// then a line "call START TOOK" per call and "gc END" per collection
// (nanoseconds).
func Write(path string, f *File) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "timeline %s %s %d\n", f.Role, f.Impl, f.C)
	for i, s := range f.Starts {
		fmt.Fprintf(w, "call %d %d\n", s, int64(f.Took[i]))
	}
	for _, e := range f.GCEnds {
		fmt.Fprintf(w, "gc %d\n", e)
	}
	err = w.Flush()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read reads a file that Write wrote.
func Read(path string) (*File, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	f, err := parse(in)
	if err != nil {
		return nil, fmt.Errorf("timeline: %s: %w", path, err)
	}
	return f, nil
}

func parse(r io.Reader) (*File, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		return nil, fmt.Errorf("empty file")
	}
	f := new(File)
	if _, err := fmt.Sscanf(sc.Text(), "timeline %s %s %d", &f.Role, &f.Impl, &f.C); err != nil {
		return nil, fmt.Errorf("bad header %q: %w", sc.Text(), err)
	}
	for line := 2; sc.Scan(); line++ {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		fields := strings.Fields(rest)
		nums := make([]int64, len(fields))
		for i, s := range fields {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			nums[i] = v
		}
		switch {
		case kind == "call" && len(nums) == 2:
			f.Starts = append(f.Starts, nums[0])
			f.Took = append(f.Took, time.Duration(nums[1]))
		case kind == "gc" && len(nums) == 1:
			f.GCEnds = append(f.GCEnds, nums[0])
		default:
			return nil, fmt.Errorf("line %d: want \"call START TOOK\" or \"gc END\", have %q", line, sc.Text())
		}
	}
	return f, sc.Err()
}
