// Package conn is the client side of a yrpc connection: dialing and the
// preface, the multiplexed connection that matches responses to calls by
// request id, the read role that lets a lone caller read its own answer
// (see read.go), heartbeats, and the per-address Pool that dials lazily
// and redials with backoff.
//
// A caller describes its call with a Request and owns a Pending record,
// reused call after call, through which the connection hands the answer
// over. A caller waits on that record and on its context; when many calls
// share one context the connection watches it for them instead (see
// ctxwatch.go). Errors are *Error values with rt's codes, wrapped in *NotSent when
// the call provably did not run; package rt turns them into *rt.Error.
// The package knows nothing of services, balancing or retries.
package conn
