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
// them, by code. It costs a clock reading and
// a log record per call; the records of a disabled level cost little
// more than that.
func ServerAccessLog(l *slog.Logger) ServerInterceptor {
	return func(ctx context.Context, req Message, info *CallInfo, next Handler) (Message, error) {
		start := time.Now()
		resp, err := next(ctx, req)
		if l.Enabled(ctx, slog.LevelInfo) {
			p, _ := PeerFrom(ctx)
			l.LogAttrs(ctx, slog.LevelInfo, "rt: call", slog.String("method", info.Method.FullName),
				slog.String("code", CodeOf(err).String()), slog.Duration("latency", time.Since(start)),
				slog.String("peer", p.addrString()), slog.String("principal", p.Principal))
		}
		return resp, err
	}
}

// ClientAccessLog returns a client interceptor that logs one line per call
// to l at Info level: method, code and latency (retries and hedges
// included). Give it with WithClientInterceptors.
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
