package metrics

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes s to w as an aligned text table, one row per series in
// the snapshot's order, for logs, tests and command-line tools:
//
//	SIDE    SERVICE/METHOD   KIND     INSTANCE       COUNT  ERRORS  RETRIES  MOCKED      P50     P99     CODES
//	client  users.Users/Get  call     -              2      0       0        fallback=1  100µs   2.47ms  -
//	client  users.Users/Get  attempt  10.0.0.1:7000  1      1       0        -           1.75ms  2.49ms  Unavailable=1
//	client  users.Users/Get  attempt  10.0.0.2:7000  1      0       1        -           375µs   498µs   -
//
// Latencies are rounded to three significant digits; CODES lists the codes
// other than OK.
func (s Snapshot) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIDE\tSERVICE/METHOD\tKIND\tINSTANCE\tCOUNT\tERRORS\tRETRIES\tMOCKED\tP50\tP99\tCODES")
	for _, x := range s.Series {
		kind := "call"
		if x.Attempt {
			kind = "attempt"
		}
		codes := maps.Clone(x.Codes)
		delete(codes, "OK")
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n",
			x.Side, x.Service, x.Method, kind, orDash(x.Instance), x.Count, x.Errors, x.Retries,
			counts(x.Mocked), round3(x.P50), round3(x.P99), counts(codes))
	}
	if s.Dropped > 0 {
		fmt.Fprintf(tw, "(%d events dropped: too many series)\n", s.Dropped)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// counts formats m as "a=1 b=2" sorted by name, or "-" when empty.
func counts(m map[string]uint64) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

// round3 rounds d to three significant digits.
func round3(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit)
}
