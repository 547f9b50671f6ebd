package load

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/names"
	"github.com/yrpc/yrpc/schema/dump"
)

// Options tune Load. The zero value means: run in the current directory,
// with the go command on PATH, no build flags, and the protobuf package
// derived from the schema's import path.
type Options struct {
	// Package is the protobuf package (the method-ID namespace) of a schema
	// whose types have no schema.Package annotation. Default:
	// names.DefaultPackage of the schema package's import path
	// (example.com/shop/schema -> "shop"), so that the same module gets
	// the same service identity in whatever directory it is checked out.
	Package string
	// Dir is the directory in which pkgPattern is resolved and the go
	// command runs; "" means the current directory.
	Dir string
	// BuildFlags are passed to the go command (e.g. "-tags=x").
	BuildFlags []string
	// GoCmd is the go command; "" means "go".
	GoCmd string
}

// Load loads the schema package pkgPattern (a directory like
// ./examples/users/schema or an import path) and returns its spec. The
// schema must be in the main module or another writable module directory
// (Load writes its temporary program there). On failure the error is an
// *Error listing every problem with file:line, type and call, or a plain
// error when the go command itself fails. Load is safe to call
// concurrently, also on the same schema.
func Load(ctx context.Context, pkgPattern string, opts Options) (*gen.Spec, error) {
	pkg, raw, spec, err := describe(ctx, pkgPattern, opts)
	if err != nil {
		return nil, err
	}
	if err := errorOf(problems(pkg, raw, spec)); err != nil {
		return nil, err
	}
	return spec, nil
}

// describe finds the schema package, runs the temporary program and
// assembles the spec, leaving the problems to the caller.
func describe(ctx context.Context, pkgPattern string, opts Options) (*schemaPkg, *rawOutput, *gen.Spec, error) {
	cwd := opts.Dir
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, nil, nil, fmt.Errorf("load: %w", err)
		}
	}
	cwd, _ = filepath.Abs(cwd)
	opts.Dir = cwd
	pkg, err := find(ctx, pkgPattern, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if pkg.fatal || len(pkg.order) == 0 {
		return nil, nil, nil, errorOf(pkg.problems)
	}
	out, err := run(ctx, pkg, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	raw := &rawOutput{}
	if err := json.Unmarshal(out, raw); err != nil {
		return nil, nil, nil, fmt.Errorf("load: decoding the schema description of %s: %w", pkg.path, err)
	}
	return pkg, raw, assemble(pkg, raw, opts.Package), nil
}

// rawOutput is the temporary program's output: dump.Output with the
// messages and services decoded straight into gen types.
type rawOutput struct {
	dump.Output
	Messages []*gen.Message `json:"messages"`
	Services []*gen.Service `json:"services"`
}

// assemble builds the spec from the program's output and what find saw in
// the source: doc comments, positions (made relative to the schema
// directory), the package name and default enum names.
func assemble(pkg *schemaPkg, raw *rawOutput, defaultPackage string) *gen.Spec {
	spec := &gen.Spec{
		Version:   gen.SpecVersion,
		SchemaPkg: pkg.path,
		Package:   raw.Package,
		Messages:  raw.Messages,
		Services:  raw.Services,
	}
	spec.Package = cmp.Or(spec.Package, defaultPackage, names.DefaultPackage(pkg.path))
	rel := func(pos string) string { return relPos(pkg.dir, pos) }
	for _, m := range spec.Messages {
		if t := pkg.types[m.Name]; t != nil {
			m.Comment, m.Pos = t.comment, rel(t.pos)
		}
		for _, f := range m.Fields {
			f.Pos = rel(f.Pos)
			if f.Enum != nil && f.Enum.Name == "" {
				f.Enum.Name = m.Name + names.GoName(f.Name)
			}
		}
	}
	for _, s := range spec.Services {
		if t := pkg.types[s.Name]; t != nil {
			s.Comment, s.Pos = t.comment, rel(t.pos)
		}
		for _, m := range s.Methods {
			m.Pos = rel(m.Pos)
		}
	}
	return spec
}

// problems merges what find saw, the builders' errors and the problems of
// gen.Check, with positions relative to the caller's directory: the loader
// checks no spec itself, it maps the spec's positions to the schema's
// files. A check problem at the position of a builder error is dropped: it
// is almost always the same mistake seen again (a bad reference leaves an
// unknown kind behind, for instance).
func problems(pkg *schemaPkg, raw *rawOutput, spec *gen.Spec) []Problem {
	display := func(pos string) string { return displayPos(pkg.cwd, pkg.dir, pos) }
	typePos := func(typ string) string {
		if t := pkg.types[typ]; t != nil {
			return display(t.pos)
		}
		return ""
	}
	ps := pkg.problems
	built := map[string]bool{}
	for _, p := range raw.Problems {
		pos := typePos(p.Type)
		if p.Pos != "" {
			rel := relPos(pkg.dir, p.Pos)
			built[rel] = true
			pos = display(rel)
		}
		ps = append(ps, Problem{Pos: pos, Type: p.Type, Msg: p.Msg})
	}
	for _, p := range gen.Check(spec) {
		if built[p.Pos] {
			continue
		}
		if p.Pos != "" {
			p.Pos = display(p.Pos)
		}
		ps = append(ps, p)
	}
	return ps
}

// relPos turns an absolute "file:line" into one relative to dir (just
// "file.go:12" for files of the schema package).
func relPos(dir, pos string) string {
	if !filepath.IsAbs(pos) {
		return pos
	}
	if r, err := filepath.Rel(dir, pos); err == nil {
		return filepath.ToSlash(r)
	}
	return pos
}

// displayPos turns a position relative to the schema directory into one
// relative to cwd for messages ("examples/users/schema/users.go:12"), or an
// absolute one when the schema is not below cwd.
func displayPos(cwd, dir, pos string) string {
	abs := pos
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, filepath.FromSlash(pos))
	}
	if r, err := filepath.Rel(cwd, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(r)
	}
	return abs
}
