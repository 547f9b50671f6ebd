package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
	"github.com/yrpc/yrpc/gen/proto"
)

func (e *Env) runDescribe(ctx context.Context, args []string) error {
	fs := e.flagSet("describe", "[--package NAME] SCHEMA", "Describe prints the services of a schema with their annotations, the methods\nwith their kinds (unary, oneway, server_stream, client_stream, bidi_stream)\nand policies, and the messages with their fields.")
	pkg := fs.String("package", "", packageUsage)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	spec, err := e.loadSchema(ctx, "describe", rest, load.Options{Package: *pkg})
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
		fmt.Fprintf(tw, "\nservice %s  %s\n", s.Name, proto.ServicePolicy(s))
		fmt.Fprintln(tw, "  METHOD\tKIND\tREQUEST\tRESPONSE\tPOLICY")
		for _, m := range s.Methods {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, m.Request, cmp.Or(m.Response, "-"), cmp.Or(proto.MethodPolicy(m), "-"))
		}
	}
	for _, m := range spec.Messages {
		fmt.Fprintf(tw, "\nmessage %s", m.Name)
		if pn := m.ProtobufName(); pn != m.Name {
			fmt.Fprintf(tw, "  protobuf=%s", pn)
		}
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
	p := []string{proto.FieldRules(f)}
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

func joinInts(ns []int32) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ", ")
}
