// Package cli implements the yrpcc commands. Each command is a method of
// Env that reads its arguments and writes to Env's streams, so that tests
// run commands in-process; the generator and the loader are injectable.
package cli
