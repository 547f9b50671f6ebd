package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// schemaImport is the import path of the DSL's base types.
const schemaImport = "github.com/yrpc/yrpc/schema"

// schemaPkg is what find learns about a schema package from its source.
type schemaPkg struct {
	path     string        // import path
	dir      string        // absolute directory
	cwd      string        // directory that error positions are relative to
	name     string        // Go package name
	order    []*schemaType // schema types in declaration order
	types    map[string]*schemaType
	problems []Problem
	fatal    bool // a file does not parse: the package cannot run
}

// schemaType is one exported type embedding schema.Message or schema.Service.
type schemaType struct {
	name    string
	service bool   // embeds schema.Service (else schema.Message)
	comment string // doc comment
	pos     string // absolute "file.go:12"
}

// listedPkg is the part of `go list -json` output that find uses.
type listedPkg struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Module     *struct{ Path, Dir string }
	Error      *struct{ Pos, Err string }
}

// find resolves the pattern with `go list` and parses the package's files
// to list its schema types: exported struct types that embed
// schema.Message or schema.Service. Syntax errors become problems; type
// errors surface when the temporary program is built.
func find(ctx context.Context, pattern string, opts Options) (*schemaPkg, error) {
	// A directory is listed from inside, so that it resolves in its own
	// module wherever the caller runs.
	dir, target := opts.Dir, pattern
	if abs := filepath.Join(opts.Dir, pattern); isPath(pattern) && isDir(abs) {
		dir, target = abs, "."
	} else if filepath.IsAbs(pattern) && isDir(pattern) {
		dir, target = pattern, "."
	}
	args := append([]string{"list", "-e", "-json=ImportPath,Name,Dir,GoFiles,Module,Error"}, opts.BuildFlags...)
	cmd := exec.CommandContext(ctx, "go", append(args, "--", target)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("load: go list %s: %s", pattern, firstLine(stderr.String(), err))
	}
	dec := json.NewDecoder(&stdout)
	var lp listedPkg
	if err := dec.Decode(&lp); err != nil {
		return nil, fmt.Errorf("load: go list %s: %w", pattern, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("load: %q matches more than one package, want one schema package", pattern)
	}
	sp := &schemaPkg{path: lp.ImportPath, dir: lp.Dir, cwd: opts.Dir, name: lp.Name, types: map[string]*schemaType{}}
	if lp.Error != nil && len(lp.GoFiles) == 0 {
		return nil, fmt.Errorf("load: %s", strings.TrimSpace(lp.Error.Err))
	}
	switch {
	case lp.Name == "main":
		return nil, fmt.Errorf("load: %s is a main package; a schema package must be importable", lp.ImportPath)
	case lp.Module == nil:
		return nil, fmt.Errorf("load: %s is not in a module", lp.ImportPath)
	}
	fset := token.NewFileSet()
	for _, name := range lp.GoFiles {
		path := filepath.Join(lp.Dir, name)
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			sp.syntaxProblems(err)
			continue
		}
		sp.inspectFile(fset, file)
	}
	if len(sp.problems) == 0 && len(sp.order) == 0 {
		return nil, fmt.Errorf("load: %s declares no exported type that embeds schema.Message or schema.Service", lp.ImportPath)
	}
	return sp, nil
}

// syntaxProblems records a parse error as problems.
func (sp *schemaPkg) syntaxProblems(err error) {
	if list, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range list.Unwrap() {
			sp.syntaxProblems(e)
		}
		return
	}
	sp.fatal = true
	msg := err.Error()
	pos := ""
	if file, rest, ok := strings.Cut(msg, ".go:"); ok {
		if loc, text, ok := strings.Cut(rest, ": "); ok {
			pos, msg = displayPos(sp.cwd, sp.dir, file+".go:"+loc), text
		}
	}
	sp.problems = append(sp.problems, Problem{Pos: pos, Msg: msg})
}

// inspectFile records the schema types that file declares.
func (sp *schemaPkg) inspectFile(fset *token.FileSet, file *ast.File) {
	// The names under which the file imports the DSL package.
	local := ""
	for _, imp := range file.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == schemaImport {
			local = "schema"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return
	}
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			sp.inspect(fset, gd, ts, st, local)
		}
	}
}

// inspect records ts if it embeds schema.Message or schema.Service.
func (sp *schemaPkg) inspect(fset *token.FileSet, gd *ast.GenDecl, ts *ast.TypeSpec, st *ast.StructType, local string) {
	var message, service, pointer bool
	for _, f := range st.Fields.List {
		if len(f.Names) != 0 {
			continue
		}
		t, ptr := f.Type, false
		if star, ok := t.(*ast.StarExpr); ok {
			t, ptr = star.X, true
		}
		sel, ok := t.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != local {
			continue
		}
		switch sel.Sel.Name {
		case "Message":
			message, pointer = true, pointer || ptr
		case "Service":
			service, pointer = true, pointer || ptr
		}
	}
	if !message && !service {
		return
	}
	position := fset.Position(ts.Pos())
	pos := fmt.Sprintf("%s:%d", position.Filename, position.Line)
	name := ts.Name.Name
	problem := func(format string, args ...any) {
		sp.problems = append(sp.problems, Problem{Pos: displayPos(sp.cwd, sp.dir, pos), Type: name, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case pointer:
		problem("embed schema.Message or schema.Service by value, not by pointer")
		return
	case message && service:
		problem("a type embeds either schema.Message or schema.Service, not both")
		return
	case !ast.IsExported(name):
		problem("type %s embeds a schema base type but is not exported; export it so that the loader can use it", name)
		return
	case ts.TypeParams != nil && len(ts.TypeParams.List) > 0:
		problem("a schema type cannot be generic")
		return
	}
	doc := ts.Doc
	if doc == nil && len(gd.Specs) == 1 {
		doc = gd.Doc
	}
	t := &schemaType{name: name, service: service, pos: pos}
	if doc != nil {
		t.comment = strings.TrimSpace(doc.Text())
	}
	sp.order = append(sp.order, t)
	sp.types[name] = t
}

// firstLine returns the first line of a go command's stderr, or err.
func firstLine(stderr string, err error) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		return err.Error()
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isPath reports whether a pattern is a relative directory path rather
// than an import path.
func isPath(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") ||
		strings.HasPrefix(p, `.\`) || strings.HasPrefix(p, `..\`)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
