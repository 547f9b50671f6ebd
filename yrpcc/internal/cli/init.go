package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/yrpc/yrpc/gen/names"
)

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func (e *Env) runInit(_ context.Context, args []string) error {
	fs := e.flagSet("init", "[--dir DIR] [--service NAME]... NAME...",
		`Init scaffolds a schema file per new message (each NAME) and per new
service (each --service NAME) in the schema directory, like ent new. It
also writes generate.go with a go:generate line if the directory has none:
"go tool yrpcc generate .", which writes generate's default target (in
module example.com/shop, ./schema generates ./shoprpc; see yrpcc help
generate). go tool needs yrpcc as a tool of the module: run
"go get -tool github.com/yrpc/yrpc/yrpcc" once (Go 1.24+); init
reminds you when go.mod does not name yrpcc yet.
It never overwrites a file.`)
	dir := fs.String("dir", "schema", "schema directory")
	var services list
	fs.Var(&services, "service", "scaffold a service named `NAME` (repeatable)")
	messages, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(messages)+len(services) == 0 {
		return usagef("give the names of the messages (and --service names) to scaffold")
	}
	type scaffold struct {
		name    string
		service bool
	}
	var todo []scaffold
	seen := map[string]bool{}
	for _, group := range []struct {
		names   []string
		service bool
	}{{messages, false}, {services, true}} {
		for _, n := range group.names {
			if !names.IsExported(n) {
				return usagef("%q is not an exported Go identifier like \"User\"", n)
			}
			if seen[n] {
				return usagef("%q is given twice", n)
			}
			seen[n] = true
			todo = append(todo, scaffold{n, group.service})
		}
	}
	target := e.path(*dir)
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	pkg, err := dirPackage(target)
	if err != nil {
		return err
	}
	// Check every file first so that init writes all or nothing.
	var out []initFile
	for _, s := range todo {
		src, err := render(scaffoldTmpl, map[string]any{"Package": pkg, "Name": s.name, "Service": s.service})
		if err != nil {
			return err
		}
		// load_test.go would be a test file and agent_windows.go built
		// only on Windows: FileStem makes them load_test_schema.go and
		// agent_windows_schema.go.
		out = append(out, initFile{filepath.Join(target, names.FileStem(names.Snake(s.name), "schema")+".go"), src})
	}
	for _, f := range out {
		if _, err := os.Stat(f.path); err == nil {
			return fmt.Errorf("%s already exists; init does not overwrite files", f.path)
		}
	}
	if !hasGenerateDirective(target) {
		src, err := render(generateTmpl, map[string]any{"Package": pkg})
		if err != nil {
			return err
		}
		out = append(out, initFile{filepath.Join(target, "generate.go"), src})
	}
	for _, f := range out {
		if err := writeNew(f.path, f.src); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "created %s\n", f.path)
	}
	if !hasTool(target) {
		fmt.Fprintf(e.Stdout, "go generate runs go tool yrpcc, which this module does not list yet: run\n\tgo get -tool %s\n", toolPath)
	}
	return nil
}

// toolPath is yrpcc's package path, as a go.mod tool directive names it.
const toolPath = "github.com/yrpc/yrpc/yrpcc"

// hasTool reports whether the go.mod of dir's module names yrpcc, as its
// tool directive does after go get -tool.
func hasTool(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	root, _ := findModule(abs)
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	return err == nil && bytes.Contains(data, []byte(toolPath))
}

type initFile struct {
	path string
	src  []byte
}

// writeNew creates path with data and fails if it exists.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; init does not overwrite files", path)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dirPackage returns the package name of the Go files in dir, or "schema"
// when there are none.
func dirPackage(dir string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), m, nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return f.Name.Name, nil
	}
	return "schema", nil
}

// hasGenerateDirective reports whether a Go file in dir has a go:generate
// line that runs yrpcc.
func hasGenerateDirective(dir string) bool {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err == nil && bytes.Contains(data, []byte("//go:generate")) && bytes.Contains(data, []byte("yrpcc")) {
			return true
		}
	}
	return false
}

// render executes t and formats the result as Go source ending in a
// newline (format.Source drops the one after a final comment).
func render(t *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil || bytes.HasSuffix(src, []byte("\n")) {
		return src, err
	}
	return append(src, '\n'), nil
}

var scaffoldTmpl = template.Must(template.New("scaffold").Parse(`package {{.Package}}

import "github.com/yrpc/yrpc/schema"

{{if .Service -}}
// {{.Name}} holds the schema of the {{.Name}} service.
type {{.Name}} struct{ schema.Service }

// Methods of {{.Name}}.
func ({{.Name}}) Methods() []schema.Method {
	return []schema.Method{
		// rpc.Unary("Get", GetRequest.Type, GetResponse.Type).Idempotent(),
	}
}

// Annotations of {{.Name}}.
func ({{.Name}}) Annotations() []schema.Annotation {
	return nil
}
{{- else -}}
// {{.Name}} holds the schema of the {{.Name}} message.
type {{.Name}} struct{ schema.Message }

// Fields of {{.Name}}.
func ({{.Name}}) Fields() []schema.Field {
	return []schema.Field{
		// field.String("name", 1),
	}
}
{{- end}}
`))

var generateTmpl = template.Must(template.New("generate").Parse(`package {{.Package}}

//go:generate go tool yrpcc generate .
`))
