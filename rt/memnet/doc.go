// Package memnet is an in-memory network for tests: listeners and dialers
// that connect through in-memory pipes instead of sockets, so a test can
// run yrpc servers and clients in one process with no ports. Like a
// socket, and unlike net.Pipe, each direction buffers BufferSize bytes, so
// a writer waits for its peer only when that much is unread; deadlines and
// half-close (CloseWrite) work as on TCP. For example:
//
//	n := memnet.New()
//	lis, _ := n.Listen("provider-1:9000")
//	go srv.Serve(ctx, lis)
//	cli, _ := rt.NewClient(rt.WithAddrs("provider-1:9000"), rt.WithDialer(n.Dial))
//
// A Network's zero value is not usable; make one with New. Its methods are
// safe for concurrent use.
package memnet
