package metrics

import "time"

// Side says which end of a call an Event describes. The zero value is not a
// valid side; String reports it as "unknown".
type Side uint8

// Sides.
const (
	Client Side = iota + 1
	Server
)

// String returns "client" or "server".
func (s Side) String() string {
	switch s {
	case Client:
		return "client"
	case Server:
		return "server"
	}
	return "unknown"
}

// Event is one finished call or attempt, as the runtime reports it to an
// Observer. Its strings are shared with the runtime's descriptors: an
// Observer must not modify them, and may keep them. Event is plain data; its
// zero value has no Side and is recorded as side "unknown".
type Event struct {
	Side    Side
	Service string // full service name, "package.Service"
	Method  string // method name, "Get"
	// Instance is the provider's address for client attempts; "" for whole
	// calls and on the server.
	Instance string
	// Attempt is 1, 2, ... for one client attempt, 0 for a whole call
	// (client: after retries, fallbacks and mocks; server: one handled
	// call).
	Attempt int
	// Code is the outcome's status code name, "OK" on success (rt.Code's
	// String).
	Code string
	// Latency is the client call's or attempt's duration; for a server
	// call or stream, from when its request or open frame was read off
	// the connection (its wait behind the frames read with it, or for a
	// worker, included) until its handler returned.
	Latency time.Duration
	// Mocked is "forced" or "fallback" when a mock answered the call, ""
	// otherwise.
	Mocked string
}

// Observer receives the runtime's events. Observe is called on the call's
// goroutine after every attempt and call, so it must be fast, must not block
// and must be safe for concurrent use.
type Observer interface {
	Observe(Event)
}
