package rt

import (
	"context"
	"log/slog"
	"time"
)

// ServerAccessLog returns a server interceptor that logs one line per call
// to l at Info level: method, code, latency, the client's address and the
// call's principal. Give it with WithServerInterceptors (first, to time
// the other interceptors too). Calls refused before the interceptors run
// are not logged (by the Authenticator, the access rules, or on arrival:
// registry token, rate and in-flight limits); the server's metrics count
// them, by code. A handler that panics is logged with code Internal, the
// code the server answers it with. It costs a clock reading and
// a log record per call; the records of a disabled level cost little
// more than that.
func ServerAccessLog(l *slog.Logger) ServerInterceptor {
	return func(ctx context.Context, req Message, info *CallInfo, next Handler) (resp Message, err error) {
		start := time.Now()
		returned := false
		defer func() {
			if !returned { // the handler panicked: the server recovers it below, answering Internal
				logServerCall(ctx, l, info, Internal, start)
			}
		}()
		resp, err = next(ctx, req)
		returned = true
		logServerCall(ctx, l, info, CodeOf(err), start)
		return resp, err
	}
}

// logServerCall writes ServerAccessLog's line of a call that ended with
// code c.
func logServerCall(ctx context.Context, l *slog.Logger, info *CallInfo, c Code, start time.Time) {
	if l.Enabled(ctx, slog.LevelInfo) {
		p, _ := PeerFrom(ctx)
		l.LogAttrs(ctx, slog.LevelInfo, "rt: call", slog.String("method", info.Method.FullName),
			slog.String("code", c.String()), slog.Duration("latency", time.Since(start)),
			slog.String("peer", p.addrString()), slog.String("principal", p.Principal))
	}
}

// ClientAccessLog returns a client interceptor that logs one line per call
// to l at Info level: method, code and latency (retries and hedges
// included). Give it with WithClientInterceptors. The line names no
// provider, as the call may have tried several; an Observer sees each
// attempt with its provider's address (see Example_attemptLog).
func ClientAccessLog(l *slog.Logger) ClientInterceptor {
	return func(ctx context.Context, info *CallInfo, req, resp Message, next InvokeFunc) error {
		start := time.Now()
		err := next(ctx, info, req, resp)
		if l.Enabled(ctx, slog.LevelInfo) {
			l.LogAttrs(ctx, slog.LevelInfo, "rt: call", slog.String("method", info.Method.FullName),
				slog.String("code", CodeOf(err).String()), slog.Duration("latency", time.Since(start)))
		}
		return err
	}
}
