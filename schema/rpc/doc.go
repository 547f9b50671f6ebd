// Package rpc declares service methods for yrpc schemas.
//
//	rpc.Unary("Get", GetUser.Type, User.Type).
//		Idempotent().Timeout(300 * time.Millisecond).
//		Retry(3, 50*time.Millisecond).Backoff(2, time.Second).Jitter(0.2).
//		HashKey("id")
//	rpc.Unary("Create", CreateUser.Type, User.Type).Mock(rpc.ReturnEmpty())
//	rpc.Unary("Ping", Ping.Type, Pong.Type).Mock(rpc.Fail("Unavailable", "down").Force())
//	rpc.Oneway("Touch", TouchUser.Type)
//
// A method's policy (timeout, retries, fault mode, mock, hedging, hash key)
// is the default of its clients; run-time client options and registry
// governance override it. Builders never panic: a mistake is recorded on
// the descriptor with the file:line of the call and reported by the loader.
package rpc
