package runner

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/timeline"
)

// Tail runs "bench tail": "bench run" keeping a timeline of every
// measurement, then, for each, how the slowest 1 % of its calls line up
// with the collections of its client and server (timeline.Analyze),
// printed and written to OUT/tail.md beside the run's own results.
func Tail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tail", flag.ContinueOnError)
	impls := fs.String("impls", strings.Join(slices.DeleteFunc([]string{"yrpc", "netrpc", "grpc"}, func(n string) bool { return !impl.Has(n) }), ","), "implementations to run")
	conc := fs.String("c", "64,256", "concurrency levels")
	repeats := fs.Int("repeats", 2, "repeats")
	calls := fs.Int("n", 150000, "counted calls per measurement")
	out := fs.String("out", "results/tail", "directory for the run's results and tail.md")
	window := fs.Duration("window", 3*time.Millisecond, "how long before its end a collection counts as under way")
	keep := fs.String("timeline", "", "directory to keep the timelines in, without timelines yet (default: a temporary one, removed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "bench-timeline-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if old, _ := filepath.Glob(filepath.Join(dir, "*.client")); len(old) > 0 {
		return fmt.Errorf("runner: %s holds timelines already (%s): they would be read with this run's", dir, filepath.Base(old[0]))
	}
	shown := []string{"-impls", *impls, "-c", *conc, "-repeats", strconv.Itoa(*repeats), "-n", strconv.Itoa(*calls), "-out", *out}
	if err := Run(ctx, append(slices.Clip(shown), "-timeline", dir), io.Discard, stderr); err != nil {
		return err
	}
	sums, skipped, err := analyzeDir(dir, *window, strings.Split(*impls, ","))
	if err != nil {
		return err
	}
	md := "# Where the slowest calls are\n\n`" + strings.TrimSpace("bench tail "+strings.Join(args, " ")) + "`: " +
		"each row is one measurement of `bench run` (" + strings.Join(shown, " ") + "), " +
		"its calls and the collections that ended during them.\n\n" + timeline.Markdown(sums, *window)
	if len(skipped) > 0 {
		md += "\nNo timeline of each call (a load that is not one call per request): " + strings.Join(skipped, ", ") + ".\n"
	}
	if err := os.WriteFile(filepath.Join(*out, "tail.md"), []byte(md), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, md)
	return err
}

// timelineStem names the timeline files of the measurement of impl
// (an entry's name) at c in repeat rep.
func timelineStem(impl string, c, rep int) string {
	return fmt.Sprintf("%s-c%d-r%d", strings.NewReplacer("/", "_", "@", "_").Replace(impl), c, rep)
}

// analyzeDir analyzes every client timeline in dir with its server's,
// ordered by concurrency, then by the implementation's place in order,
// then as the files' names sort (by repeat). It also returns the names of
// the files that have no calls (a harness.Driver's).
func analyzeDir(dir string, window time.Duration, order []string) (sums []timeline.Summary, skipped []string, err error) {
	clients, err := filepath.Glob(filepath.Join(dir, "*.client"))
	if err != nil {
		return nil, nil, err
	}
	if len(clients) == 0 {
		return nil, nil, fmt.Errorf("runner: no client timeline in %s", dir)
	}
	for _, path := range clients {
		cli, err := timeline.Read(path)
		if err != nil {
			return nil, nil, err
		}
		if len(cli.Starts) == 0 {
			skipped = append(skipped, filepath.Base(path))
			continue
		}
		srv, err := timeline.Read(strings.TrimSuffix(path, ".client") + ".server")
		if err != nil {
			return nil, nil, err
		}
		s, err := timeline.Analyze(cli, srv, window)
		if err != nil {
			return nil, nil, err
		}
		sums = append(sums, s)
	}
	slices.SortStableFunc(sums, func(a, b timeline.Summary) int {
		return cmp.Or(cmp.Compare(a.C, b.C), cmp.Compare(slices.Index(order, a.Impl), slices.Index(order, b.Impl)))
	})
	return sums, skipped, nil
}
