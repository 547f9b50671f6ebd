// Package memnet is an in-memory network for tests: listeners and dialers
// that connect through net.Pipe instead of sockets, so a test can run yrpc
// servers and clients in one process with no ports, e.g.
//
//	n := memnet.New()
//	lis, _ := n.Listen("provider-1:9000")
//	go srv.Serve(ctx, lis)
//	cli, _ := rt.NewClient(rt.WithAddrs("provider-1:9000"), rt.WithDialer(n.Dial))
//
// A Network's zero value is not usable; make one with New. Its methods are
// safe for concurrent use.
package memnet
