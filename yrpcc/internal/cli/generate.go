package cli

import (
	"bufio"
	"cmp"
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
removed; other files in the target are left alone.

The default target is the directory beside the schema directory named
after the import path element above the schema package plus "rpc"
(example.com/shop/schema in ./schema -> ./shoprpc, package shoprpc): the
same name as the default protobuf package, from the module path, never
from a directory's name. init's go:generate line relies on it.`)
	target := fs.String("target", "", "directory of the generated package (default: NAMErpc beside the schema directory, NAME from the schema's import path)")
	pkgName := fs.String("package", "", "Go package name of the generated code (default: the last element of the target's import path)")
	verbose := fs.Bool("v", false, "list the files written and removed")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("want one schema package, got %d arguments", len(rest))
	}
	schemaArg := e.schemaArg(rest[0])
	if looksLikePath(schemaArg) && !isDir(e.path(schemaArg)) {
		return fmt.Errorf("schema directory %q does not exist", schemaArg)
	}
	if *target == "" && !looksLikePath(schemaArg) {
		return usagef("--target is required when the schema %q is an import path", schemaArg)
	}
	if *pkgName != "" && !names.IsGoIdent(*pkgName) {
		return usagef("--package %q is not a Go identifier", *pkgName)
	}
	// The protobuf package (the method-ID namespace) does not depend on
	// where the code goes: schema.Package, else a name from the schema's
	// import path, as describe and proto use.
	spec, err := e.loadSchema(ctx, "generate", []string{schemaArg}, load.Options{})
	if err != nil {
		return err
	}
	dir := e.path(*target)
	if *target == "" {
		if dir, err = defaultTarget(e.path(schemaArg), spec.SchemaPkg); err != nil {
			return err
		}
	}
	name := cmp.Or(*pkgName, goPackage(dir))
	if name == "" {
		return usagef("cannot derive a package name from %q; use --package", dir)
	}
	files, err := e.Generate(spec, gen.Config{Package: name, ImportPath: importPath(dir)})
	if err != nil {
		return err
	}
	if err := checkTarget(dir, spec.SchemaPkg); err != nil {
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

// defaultTarget is the one default directory of generated code: beside the
// schema directory, named after the import path element above the schema
// package plus "rpc" (names.DefaultPackage, as the protobuf package).
func defaultTarget(schemaDir, schemaPath string) (string, error) {
	name := names.DefaultPackage(schemaPath)
	if name == "" {
		return "", usagef("cannot derive a target from the schema's import path %q; use --target", schemaPath)
	}
	abs, err := filepath.Abs(schemaDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(abs), name+"rpc"), nil
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
	root, mod := findModule(abs)
	if root == "" {
		return ""
	}
	rel, err := filepath.Rel(root, abs)
	switch {
	case err != nil:
		return ""
	case rel == ".":
		return mod
	}
	return mod + "/" + filepath.ToSlash(rel)
}

// findModule returns the directory of the go.mod that governs the absolute
// directory dir, and its module path; "", "" when there is none.
func findModule(dir string) (root, mod string) {
	for d := dir; ; {
		if mod := modulePath(filepath.Join(d, "go.mod")); mod != "" {
			return d, mod
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
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
