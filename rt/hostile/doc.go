// Package hostile is the runtime's hostile-client suite: each test attacks
// a real rt.Server, serving the examples' generated services on loopback
// TCP, the way a broken or malicious peer would, and checks what every
// attack must leave true: the server is up (Serve still runs and a fresh
// client is served), its heap stayed under the attack's limit (64 MiB
// unless the attack says otherwise), and a well-behaved rt.Client calling
// from 127.0.0.1 all along saw no failure.
//
// Attackers dial from 127.0.0.2 and up and are raw sockets writing
// precomputed bytes, so that what they hold is small next to what they
// make the server hold (the server and the attackers share the test
// process and its heap). Each test logs its figures (heap, connections,
// refusals, times) with t.Logf; run `go test -race -v ./rt/hostile/` to
// see them.
//
// The package has no API. The tests need Linux (the 127.0.0.0/8 loopback
// network and /proc/net/tcp).
package hostile
