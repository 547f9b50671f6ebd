package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// prefix starts every protocol line.
const prefix = "@bench "

// lines reads protocol lines from r in a goroutine; other lines go to
// echo (when not nil). The channel closes at end of input.
func lines(r io.Reader, echo io.Writer) <-chan string {
	ch := make(chan string, 4)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				ch <- rest
			} else if echo != nil {
				fmt.Fprintln(echo, line)
			}
		}
		// Drain so that the writer never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}()
	return ch
}

// expect waits for the next protocol line, which must start with verb, and
// returns the rest of it.
func expect(ctx context.Context, ch <-chan string, who, verb string) (string, error) {
	select {
	case line, ok := <-ch:
		if !ok {
			return "", fmt.Errorf("runner: %s exited before %q", who, verb)
		}
		rest, ok := strings.CutPrefix(line, verb)
		if !ok || (rest != "" && rest[0] != ' ') {
			return "", fmt.Errorf("runner: %s said %q, want %q", who, line, verb)
		}
		return strings.TrimPrefix(rest, " "), nil
	case <-ctx.Done():
		return "", fmt.Errorf("runner: waiting for %s to say %q: %w", who, verb, context.Cause(ctx))
	}
}

// say writes one protocol line.
func say(w io.Writer, format string, args ...any) error {
	_, err := fmt.Fprintf(w, prefix+format+"\n", args...)
	return err
}

// memLine is a server's answer to "mem".
type memLine struct {
	mallocs, total uint64 // runtime.MemStats.Mallocs and TotalAlloc
	conns          int    // connections accepted so far; -1 when not said
}

// parseMem parses "MALLOCS TOTALALLOC [CONNS]" (a bench binary of an
// older build leaves CONNS out).
func parseMem(s string) (memLine, error) {
	m := memLine{conns: -1}
	f := strings.Fields(s)
	var err error
	switch len(f) {
	case 3:
		m.conns, err = strconv.Atoi(f[2])
		fallthrough
	case 2:
		_, err2 := fmt.Sscan(f[0]+" "+f[1], &m.mallocs, &m.total)
		err = errors.Join(err, err2)
	default:
		err = errors.New("want 2 or 3 numbers")
	}
	if err != nil {
		return memLine{}, fmt.Errorf("runner: bad mem line %q: %w", s, err)
	}
	return m, nil
}
