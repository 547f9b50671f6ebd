package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
	"github.com/yrpc/yrpc/gen/names"
)

func (e *Env) runGenerate(ctx context.Context, args []string) error {
	fs := e.flagSet("generate", "[--target DIR] [--package NAME] [-v] SCHEMA",
		`Generate loads the schema package SCHEMA and writes the generated Go package
into the target directory: messages with their codecs and validators,
enums, service descriptors, dispatch tables, server interfaces and client
stubs. Files that an earlier run generated but this one does not are
removed; other files in the target are left alone.`)
	target := fs.String("target", "", "directory of the generated package (default: the schema directory's parent, as ent does: ./x/schema -> ./x)")
	pkgName := fs.String("package", "", "Go package name of the generated code (default: the last element of the target's import path)")
	verbose := fs.Bool("v", false, "list the files written and removed")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("want one schema package, got %d arguments", len(rest))
	}
	schemaArg := rest[0]
	dir := *target
	if looksLikePath(schemaArg) && !isDir(e.path(schemaArg)) {
		return fmt.Errorf("schema directory %q does not exist", schemaArg)
	}
	if dir == "" {
		if !looksLikePath(schemaArg) {
			return usagef("--target is required when the schema %q is an import path", schemaArg)
		}
		dir = filepath.Dir(filepath.Clean(e.path(schemaArg)))
	} else {
		dir = e.path(dir)
	}
	name := *pkgName
	if name == "" {
		name = goPackage(dir)
		if name == "" {
			return usagef("cannot derive a package name from %q; use --package", dir)
		}
	} else if !names.IsGoIdent(name) {
		return usagef("--package %q is not a Go identifier", name)
	}
	// The protobuf package (the method-ID namespace) does not depend on
	// where the code goes: schema.Package, else a name from the schema's
	// import path, as describe and proto use.
	spec, err := e.loadSchema(ctx, rest, load.Options{})
	if err != nil {
		return err
	}
	files, err := e.Generate(spec, gen.Config{Package: name, ImportPath: importPath(dir)})
	if err != nil {
		return err
	}
	written, removed, err := writeFiles(dir, files)
	if *verbose {
		for _, f := range written {
			fmt.Fprintf(e.Stdout, "wrote %s\n", filepath.Join(dir, f))
		}
		for _, f := range removed {
			fmt.Fprintf(e.Stdout, "removed %s\n", filepath.Join(dir, f))
		}
	}
	return err
}

// goPackage returns the default Go package name of generated code in dir:
// the last element of dir's import path, or of dir when it is not in a
// module; "" when no letter is left.
func goPackage(dir string) string {
	if ip := importPath(dir); ip != "" {
		return names.ImportName(ip)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return names.PackageName(filepath.Base(abs))
}

// importPath returns the import path that dir has in its module (found by
// walking up to go.mod), or "" when it cannot tell.
func importPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; {
		if mod := modulePath(filepath.Join(d, "go.mod")); mod != "" {
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return ""
			}
			if rel == "." {
				return mod
			}
			return mod + "/" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// modulePath reads the module directive of a go.mod file; "" if there is
// none or the file does not exist.
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
