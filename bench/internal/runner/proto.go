package runner

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// parseMem parses "MALLOCS TOTALALLOC".
func parseMem(s string) (mallocs, total uint64, err error) {
	if _, err := fmt.Sscan(s, &mallocs, &total); err != nil {
		return 0, 0, fmt.Errorf("runner: bad mem line %q: %w", s, err)
	}
	return mallocs, total, nil
}
