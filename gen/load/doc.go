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
// Check validates a spec (wire numbers, names that clash in Go, references,
// enums, policies); Load runs it, and the generator and tests can run it on
// specs built in memory. Both return every problem at once as an *Error.
package load
