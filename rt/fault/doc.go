// Package fault injects failures into a yrpc server, for users' tests and
// for yrpc's own fault-injection suite: a delay, an abort with a status
// code, or a dropped connection, per method, for a fraction of the calls.
// Rules come from the Injector (changeable at run time) or, when allowed,
// from the call's "yrpc-fault" metadata, so that one test can aim a fault at
// one call:
//
//	inj := fault.New(fault.Rule{Method: "Get", Abort: rt.Unavailable})
//	srv := rt.NewServer(rt.WithServerInterceptors(inj.Interceptor()),
//		rt.WithStreamServerInterceptors(inj.StreamInterceptor()))
//	...
//	inj.Set() // no more faults
//
// A rule applies to a stream once, when it opens, before its handler runs.
//
// Metadata rules ("delay=20ms", "abort=Unavailable:message", "drop",
// separated by ";") apply only with Options.FromMetadata, never by default:
// a production server must not let callers inject faults.
package fault
