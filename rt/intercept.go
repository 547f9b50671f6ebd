package rt

import "context"

// Handler serves one call on the server: the generated dispatch, wrapped by
// the server's interceptors.
type Handler func(ctx context.Context, req Message) (Message, error)

// ServerInterceptor wraps every handler of a server. It may inspect or
// replace the request and the response, or answer without calling next.
type ServerInterceptor func(ctx context.Context, req Message, info *CallInfo, next Handler) (Message, error)

// InvokeFunc makes one call from the client: the whole call path below the
// interceptors (mocks, balancing, breakers, retries).
type InvokeFunc func(ctx context.Context, info *CallInfo, req, resp Message) error

// ClientInterceptor wraps every call of a client. resp is nil for oneway
// calls.
type ClientInterceptor func(ctx context.Context, info *CallInfo, req, resp Message, next InvokeFunc) error

func chainServer(ints []ServerInterceptor, info *CallInfo, h Handler) Handler {
	for i := len(ints) - 1; i >= 0; i-- {
		in, next := ints[i], h
		h = func(ctx context.Context, req Message) (Message, error) { return in(ctx, req, info, next) }
	}
	return h
}

func chainStream(ints []StreamServerInterceptor, info *CallInfo, h StreamHandler) StreamHandler {
	for i := len(ints) - 1; i >= 0; i-- {
		in, next := ints[i], h
		h = func(ss ServerStreamer) error { return in(ss, info, next) }
	}
	return h
}

func chainStreamClient(ints []StreamClientInterceptor, s Streamer) Streamer {
	for i := len(ints) - 1; i >= 0; i-- {
		in, next := ints[i], s
		s = func(ctx context.Context, info *CallInfo) (ClientStreamer, error) { return in(ctx, info, next) }
	}
	return s
}

func chainClient(ints []ClientInterceptor, f InvokeFunc) InvokeFunc {
	for i := len(ints) - 1; i >= 0; i-- {
		in, next := ints[i], f
		f = func(ctx context.Context, info *CallInfo, req, resp Message) error {
			return in(ctx, info, req, resp, next)
		}
	}
	return f
}
