package dump

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/yrpc/yrpc/schema"
)

// Output is the JSON document that Write prints. Its messages, fields,
// services and methods have gen.Spec's JSON form.
type Output struct {
	Package    string     `json:"package,omitempty"`
	PackagePos string     `json:"package_pos,omitempty"`
	Messages   []*Message `json:"messages"`
	Services   []*Service `json:"services"`
	Problems   []Problem  `json:"problems,omitempty"`
}

// Message is one message schema.
type Message struct {
	Name     string                    `json:"name"`
	Fields   []*schema.FieldDescriptor `json:"fields"`
	Reserved []int32                   `json:"reserved,omitempty"`
}

// Service is one service schema with its annotations applied.
type Service struct {
	Name      string                     `json:"name"`
	Group     string                     `json:"group,omitempty"`
	Version   string                     `json:"version,omitempty"`
	RateLimit *schema.RateLimitPolicy    `json:"rate_limit,omitempty"`
	Breaker   *schema.BreakerPolicy      `json:"breaker,omitempty"`
	Balance   string                     `json:"balance,omitempty"`
	Allow     []string                   `json:"allow,omitempty"`
	Methods   []*schema.MethodDescriptor `json:"methods"`
}

// Problem is a mistake found while running the schema: a builder error or
// a panic.
type Problem struct {
	Pos  string `json:"pos,omitempty"` // "/abs/file.go:12", or "" when unknown
	Type string `json:"type"`          // schema type, e.g. "User"
	Msg  string `json:"msg"`
}

// Dumper collects the description of one schema package. The zero value is
// not usable; call New. A Dumper is not safe for concurrent use.
type Dumper struct {
	pkgPath string
	out     Output
}

// New returns a Dumper for the schema package with import path pkgPath.
func New(pkgPath string) *Dumper {
	return &Dumper{pkgPath: pkgPath, out: Output{Messages: []*Message{}, Services: []*Service{}}}
}

// Output returns what the Dumper has collected so far.
func (d *Dumper) Output() *Output { return &d.out }

// Write prints the collected description as JSON to w and returns the exit
// status for the temporary main: 0, or 1 if w failed.
func (d *Dumper) Write(w io.Writer) int {
	if err := json.NewEncoder(w).Encode(&d.out); err != nil {
		fmt.Fprintln(w, "dump:", err)
		return 1
	}
	return 0
}

func (d *Dumper) problem(pos, typ, format string, args ...any) {
	d.out.Problems = append(d.out.Problems, Problem{Pos: pos, Type: typ, Msg: fmt.Sprintf(format, args...)})
}

// guard runs f and turns a panic into a Problem for typ's method.
func (d *Dumper) guard(typ, method string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			d.problem(d.panicPos(), typ, "%s.%s panicked: %v", typ, method, r)
		}
	}()
	f()
}

// panicPos finds the line that panicked: the first frame below the runtime's
// panic machinery that belongs to the schema package, else the first one
// outside the runtime.
func (d *Dumper) panicPos() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(1, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	inPanic, fallback := false, ""
	for {
		f, more := frames.Next()
		switch {
		case strings.HasPrefix(f.Function, "runtime.gopanic") || strings.HasPrefix(f.Function, "runtime.sigpanic") || strings.HasPrefix(f.Function, "runtime.panic"):
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime."):
			pos := fmt.Sprintf("%s:%d", f.File, f.Line)
			if strings.HasPrefix(f.Function, d.pkgPath+".") {
				return pos
			}
			if fallback == "" {
				fallback = pos
			}
		}
		if !more {
			return fallback
		}
	}
}

// Message describes the message schema m named name.
func (d *Dumper) Message(name string, m schema.MessageSchema) {
	msg := &Message{Name: name, Fields: []*schema.FieldDescriptor{}}
	d.out.Messages = append(d.out.Messages, msg)
	var mixins []schema.Mixin
	d.guard(name, "Mixin", func() { mixins = m.Mixin() })
	for i, mx := range mixins {
		if mx == nil {
			d.problem("", name, "%s.Mixin()[%d] is nil", name, i)
			continue
		}
		mname := fmt.Sprintf("%s.Mixin()[%d]", name, i)
		var fields []schema.Field
		d.guard(name, fmt.Sprintf("Mixin()[%d].Fields", i), func() { fields = mx.Fields() })
		d.fields(msg, mname+".Fields()", fields)
		var anns []schema.Annotation
		d.guard(name, fmt.Sprintf("Mixin()[%d].Annotations", i), func() { anns = mx.Annotations() })
		d.messageAnnotations(name, mname+".Annotations()", anns)
	}
	var fields []schema.Field
	d.guard(name, "Fields", func() { fields = m.Fields() })
	d.fields(msg, name+".Fields()", fields)
	var anns []schema.Annotation
	d.guard(name, "Annotations", func() { anns = m.Annotations() })
	d.messageAnnotations(name, name+".Annotations()", anns)
	d.guard(name, "Reserved", func() { msg.Reserved = m.Reserved() })
}

func (d *Dumper) fields(msg *Message, from string, fields []schema.Field) {
	for i, f := range fields {
		if f == nil {
			d.problem("", msg.Name, "%s[%d] is nil", from, i)
			continue
		}
		var fd *schema.FieldDescriptor
		d.guard(msg.Name, fmt.Sprintf("Fields()[%d].Descriptor", i), func() { fd = f.Descriptor() })
		if fd == nil {
			continue
		}
		for _, e := range fd.Errors {
			d.problem(fd.Pos, msg.Name, "%v", e)
		}
		if fd.MessagePkg != "" && fd.MessagePkg != d.pkgPath {
			d.problem(fd.Pos, msg.Name, "field %q references %s.%s, which is outside the schema package %s", fd.Name, fd.MessagePkg, fd.Message, d.pkgPath)
		}
		msg.Fields = append(msg.Fields, fd)
	}
}

func (d *Dumper) messageAnnotations(typ, from string, anns []schema.Annotation) {
	for i, a := range anns {
		ad := d.annotation(typ, from, i, a)
		if ad == nil {
			continue
		}
		if ad.Kind != "package" {
			d.problem(ad.Pos, typ, "%s: applies to services, not to message %s", ad.Call, typ)
			continue
		}
		d.setPackage(typ, ad)
	}
}

func (d *Dumper) annotation(typ, from string, i int, a schema.Annotation) *schema.AnnotationDescriptor {
	if a == nil {
		d.problem("", typ, "%s[%d] is nil", from, i)
		return nil
	}
	var ad *schema.AnnotationDescriptor
	d.guard(typ, fmt.Sprintf("Annotations()[%d].Descriptor", i), func() { ad = a.Descriptor() })
	if ad == nil {
		return nil
	}
	for _, e := range ad.Errors {
		d.problem(ad.Pos, typ, "%v", e)
	}
	if len(ad.Errors) > 0 {
		return nil
	}
	return ad
}

func (d *Dumper) setPackage(typ string, ad *schema.AnnotationDescriptor) {
	if d.out.Package != "" && d.out.Package != ad.Package {
		d.problem(ad.Pos, typ, "%s: conflicts with schema.Package(%q) at %s", ad.Call, d.out.Package, d.out.PackagePos)
		return
	}
	d.out.Package, d.out.PackagePos = ad.Package, ad.Pos
}

// Service describes the service schema s named name.
func (d *Dumper) Service(name string, s schema.ServiceSchema) {
	svc := &Service{Name: name, Methods: []*schema.MethodDescriptor{}}
	d.out.Services = append(d.out.Services, svc)
	var methods []schema.Method
	d.guard(name, "Methods", func() { methods = s.Methods() })
	for i, m := range methods {
		if m == nil {
			d.problem("", name, "%s.Methods()[%d] is nil", name, i)
			continue
		}
		var md *schema.MethodDescriptor
		d.guard(name, fmt.Sprintf("Methods()[%d].Descriptor", i), func() { md = m.Descriptor() })
		if md == nil {
			continue
		}
		for _, e := range md.Errors {
			d.problem(md.Pos, name, "%v", e)
		}
		for _, ref := range [][2]string{{md.Request, md.RequestPkg}, {md.Response, md.ResponsePkg}} {
			if ref[1] != "" && ref[1] != d.pkgPath {
				d.problem(md.Pos, name, "method %q references %s.%s, which is outside the schema package %s", md.Name, ref[1], ref[0], d.pkgPath)
			}
		}
		svc.Methods = append(svc.Methods, md)
	}
	var anns []schema.Annotation
	d.guard(name, "Annotations", func() { anns = s.Annotations() })
	seen := map[string]string{}
	for i, a := range anns {
		ad := d.annotation(name, name+".Annotations()", i, a)
		if ad == nil {
			continue
		}
		if prev, ok := seen[ad.Kind]; ok {
			d.problem(ad.Pos, name, "%s: %s already set by %s", ad.Call, ad.Kind, prev)
			continue
		}
		seen[ad.Kind] = ad.Call
		switch ad.Kind {
		case "group":
			svc.Group = ad.Group
		case "version":
			svc.Version = ad.Version
		case "rate_limit":
			svc.RateLimit = ad.RateLimit
		case "breaker":
			svc.Breaker = ad.Breaker
		case "balance":
			svc.Balance = ad.Balance
		case "allow":
			svc.Allow = ad.Allow
		case "package":
			d.setPackage(name, ad)
		}
	}
}
