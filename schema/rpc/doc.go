// Package rpc declares service methods for yrpc schemas.
//
//	rpc.Unary("Get", GetUser.Type, User.Type).
//		Idempotent().Timeout(300 * time.Millisecond).
//		Retry(3, 50*time.Millisecond).Backoff(2, time.Second).Jitter(0.2).
//		HashKey("id")
//	rpc.Unary("Create", CreateUser.Type, User.Type).Mock(rpc.ReturnEmpty())
//	rpc.Unary("Ping", Ping.Type, Pong.Type).Mock(rpc.Fail("Unavailable", "down").Force())
//	rpc.Oneway("Touch", TouchUser.Type)
//	rpc.ServerStream("Watch", WatchUsers.Type, UserEvent.Type).
//		Retry(3, 100*time.Millisecond).HashKey("id").MaxMessageSize(64 << 10)
//	rpc.ClientStream("Import", User.Type, ImportResult.Type).Timeout(time.Minute)
//	rpc.BidiStream("Chat", ChatMessage.Type, ChatMessage.Type)
//
// A method's policy (timeout, retries, fault mode, mock, hedging, hash key,
// message size) is the default of its clients; run-time client options
// and registry governance override it.
//
// Streams take the policies that make sense for them. Timeout bounds the
// whole stream and MaxMessageSize each of its messages (unary and oneway
// messages are bounded by the frame size instead). A server stream's one
// request is known when it opens, so it takes HashKey, and Retry (with
// Idempotent, Backoff and Jitter) until its first response message
// reaches the caller. Client and bidi streams send their requests as the
// caller makes them: they are never retried and pick their instance before
// any request exists, so they take neither (rt.WithHashKey gives a stream
// a hash key per call). No stream takes TryTimeout, Hedge, FaultMode or
// Mock. Builders never panic: a mistake is recorded on
// the descriptor with the file:line of the call and reported by the loader.
package rpc
