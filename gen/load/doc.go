// Package load turns a schema package into a gen.Spec, the way ent's loader
// does.
//
// Load resolves the package with `go list`, parses its files to find the
// exported types that embed schema.Message or schema.Service (and their doc
// comments), then writes a temporary main package inside the schema's
// directory that imports the schema package and passes every schema type to
// github.com/yrpc/yrpc/schema/dump. It builds and runs that program (a
// schema that does not compile is reported with the compiler's file:line),
// decodes the JSON it prints and removes the temporary directory. Each
// schema method call is guarded, so a panic becomes a problem with the
// position of the panicking line. The loader needs only the standard
// library and the go command.
//
// The loader checks no spec itself: it runs gen.Check, the generator's one
// check of a spec, on the spec it assembled, and maps the spec positions of
// the problems (the position of the field, method or type involved) to
// file:line relative to Options.Dir. Load returns every problem at once,
// the builders' and the check's, as an *Error sorted by position.
//
// The protobuf package of a schema without schema.Package is derived from
// the schema package's import path (names.DefaultPackage), never from a
// directory name, so a service's wire identity does not depend on where
// the module is checked out.
package load
