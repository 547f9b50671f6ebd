// Package runner implements the bench command's subcommands: "server" and
// "client" run one side of one implementation in their own process, and
// "run" starts a server and a client process per measurement, drives them
// over a line protocol on their standard input and output, and writes the
// report.
//
// The line protocol: every line meant for the harness starts with
// "@bench " (libraries that log to standard output are ignored). A server
// prints "@bench addr HOST:PORT" once it listens, answers "mem" with
// "@bench mem MALLOCS TOTALALLOC" (its runtime.MemStats counters) and
// stops on "quit" or end of input. A client dials, runs its warm-up,
// prints "@bench ready", waits for "go", runs the counted phase and prints
// "@bench result JSON".
package runner
