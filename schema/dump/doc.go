// Package dump describes schema types as JSON for the loader.
//
// The loader (github.com/yrpc/yrpc/gen/load) writes a temporary main
// package that imports the user's schema package, passes each schema type
// to a Dumper, and reads the JSON that Dumper.Write prints. Every call of a
// schema method is guarded: a panic becomes a Problem with the position of
// the panicking line. Users do not need this package.
package dump
