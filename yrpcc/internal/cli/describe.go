package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

func (e *Env) runDescribe(ctx context.Context, args []string) error {
	fs := e.flagSet("describe", "[--package NAME] SCHEMA", "Describe prints the services of a schema with their annotations, the methods\nwith their policies, and the messages with their fields.")
	pkg := fs.String("package", "", packageUsage)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	spec, err := e.loadSchema(ctx, rest, load.Options{Package: *pkg})
	if err != nil {
		return err
	}
	return describe(e.Stdout, spec)
}

// describe writes the tables of spec to w.
func describe(w io.Writer, spec *gen.Spec) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "package %s", spec.Package)
	if spec.SchemaPkg != "" {
		fmt.Fprintf(tw, " (schema %s)", spec.SchemaPkg)
	}
	fmt.Fprintln(tw)
	for _, s := range spec.Services {
		fmt.Fprintf(tw, "\nservice %s  %s\n", s.Name, servicePolicy(s))
		fmt.Fprintln(tw, "  METHOD\tREQUEST\tRESPONSE\tPOLICY")
		for _, m := range s.Methods {
			resp := m.Response
			if m.Oneway {
				resp = "(oneway)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", m.Name, m.Request, resp, methodPolicy(m))
		}
	}
	for _, m := range spec.Messages {
		fmt.Fprintf(tw, "\nmessage %s", m.Name)
		if len(m.Reserved) > 0 {
			fmt.Fprintf(tw, "  reserved %s", joinInts(m.Reserved))
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "  #\tFIELD\tTYPE\tRULES")
		for _, f := range m.Fields {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", f.Number, f.Name, fieldType(f), fieldRules(f))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+strings.Repeat("\n", strings.Count(line, "\n"))); err != nil {
			return err
		}
	}
	return nil
}

func servicePolicy(s *gen.Service) string {
	var p []string
	if s.Group != "" {
		p = append(p, "group="+s.Group)
	}
	if s.Version != "" {
		p = append(p, "version="+s.Version)
	}
	if r := s.RateLimit; r != nil {
		p = append(p, fmt.Sprintf("rate-limit=%v/s burst %d", r.Rate, r.Burst))
	}
	if b := s.Breaker; b != nil {
		p = append(p, fmt.Sprintf("breaker=%v%% of >=%d calls, open %v", b.ErrorRate*100, b.MinRequests, b.OpenFor))
	}
	if s.Balance != "" {
		p = append(p, "balance="+s.Balance)
	}
	return strings.Join(p, "  ")
}

func methodPolicy(m *gen.Method) string {
	var p []string
	if m.Idempotent {
		p = append(p, "idempotent")
	}
	if m.Timeout > 0 {
		p = append(p, "timeout="+m.Timeout.String())
	}
	if r := m.Retry; r != nil {
		s := fmt.Sprintf("retry=%d tries every %v", r.Tries, r.Interval)
		if r.Backoff > 1 {
			s += fmt.Sprintf(" x%v", r.Backoff)
		}
		if r.MaxInterval > 0 {
			s += fmt.Sprintf(" max %v", r.MaxInterval)
		}
		if r.Jitter > 0 {
			s += fmt.Sprintf(" ±%v%%", r.Jitter*100)
		}
		p = append(p, s)
	}
	if m.HashKey != "" {
		p = append(p, "hash-key="+m.HashKey)
	}
	if m.FaultMode != "" {
		s := "fault=" + m.FaultMode
		if m.FaultMode == "forking" {
			s += "(" + strconv.Itoa(m.Forks) + ")"
		}
		p = append(p, s)
	}
	if m.Hedge > 0 {
		p = append(p, "hedge="+m.Hedge.String())
	}
	if mk := m.Mock; mk != nil {
		mode := "on-failure"
		if mk.Force {
			mode = "force"
		}
		s := "mock=" + mode + " "
		switch mk.Action {
		case "empty":
			s += "empty"
		case "value":
			s += "value " + mk.Value
		case "fail":
			s += fmt.Sprintf("fail %s %q", mk.Code, mk.Message)
		}
		p = append(p, s)
	}
	if len(p) == 0 {
		return "-"
	}
	return strings.Join(p, " ")
}

func fieldType(f *gen.Field) string {
	elem := string(f.Kind)
	switch f.Kind {
	case gen.KindMessage:
		elem = f.Message
	case gen.KindEnum:
		if f.Enum != nil {
			elem = "enum " + f.Enum.Name
		}
	}
	switch {
	case f.List:
		return "[]" + elem
	case f.MapKey != "":
		return "map[" + string(f.MapKey) + "]" + elem
	case f.Optional:
		return "optional " + elem
	}
	return elem
}

func fieldRules(f *gen.Field) string {
	p := []string{validation(f)}
	if p[0] == "" {
		p = p[:0]
	}
	if f.Unpacked {
		p = append(p, "unpacked")
	}
	if f.Deprecated {
		p = append(p, "deprecated")
	}
	if f.Enum != nil {
		var vals []string
		for _, ev := range f.Enum.Values {
			vals = append(vals, fmt.Sprintf("%s=%d", ev.Name, ev.Number))
		}
		p = append(p, "values="+strings.Join(vals, ","))
	}
	return strings.Join(p, " ")
}

// validation describes f's validators, e.g. "not-empty max-len=64".
func validation(f *gen.Field) string {
	var p []string
	v := f.Validate
	if v.NotEmpty {
		p = append(p, "not-empty")
	}
	if v.MinLen > 0 {
		p = append(p, fmt.Sprintf("min-len=%d", v.MinLen))
	}
	if v.MaxLen > 0 {
		p = append(p, fmt.Sprintf("max-len=%d", v.MaxLen))
	}
	if v.Min != nil && v.Max != nil {
		p = append(p, "range=["+num(*v.Min)+", "+num(*v.Max)+"]")
	}
	if v.Match != "" {
		p = append(p, "match="+v.Match)
	}
	return strings.Join(p, " ")
}

func joinInts(ns []int32) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ", ")
}

// num formats a range bound: integers in full, others shortest.
func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e18 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
