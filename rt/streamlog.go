package rt

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// StreamServerAccessLog returns a stream interceptor that logs one line
// per stream to l at Info level when its handler returns: the fields of
// ServerAccessLog's line (method, code, latency, peer, principal) and the
// messages the handler sent and received. Give it with
// WithStreamServerInterceptors (first, to time the other interceptors
// too); it serves streams over yrpc's wire and the gRPC endpoint alike.
// As with ServerAccessLog, streams refused before the interceptors run
// have no line, and a handler that panics is logged with code Internal.
// It costs a clock reading, a small wrapper of the stream and a log
// record per stream, and an atomic add per message; unary calls are not
// affected.
func StreamServerAccessLog(l *slog.Logger) StreamServerInterceptor {
	return func(ss ServerStreamer, info *CallInfo, next StreamHandler) (err error) {
		s := &countedServerStream{ServerStreamer: ss}
		start := time.Now()
		returned := false
		defer func() {
			if !returned { // the handler panicked: the server recovers it below, answering Internal
				s.log(l, info, Internal, start)
			}
		}()
		err = next(s)
		returned = true
		s.log(l, info, CodeOf(err), start)
		return err
	}
}

// messageCounts counts a stream's messages sent and received.
type messageCounts struct{ sent, received atomic.Int64 }

// count adds a message sent (sent) or received when err is nil.
func (n *messageCounts) count(sent bool, err error) {
	switch {
	case err != nil:
	case sent:
		n.sent.Add(1)
	default:
		n.received.Add(1)
	}
}

// countedServerStream is a server stream that counts its messages.
type countedServerStream struct {
	ServerStreamer
	n messageCounts
}

func (s *countedServerStream) SendMsg(m Message) error {
	err := s.ServerStreamer.SendMsg(m)
	s.n.count(true, err)
	return err
}

func (s *countedServerStream) RecvMsg(m Message) error {
	err := s.ServerStreamer.RecvMsg(m)
	s.n.count(false, err)
	return err
}

// log writes StreamServerAccessLog's line of a stream that ended with
// code c.
func (s *countedServerStream) log(l *slog.Logger, info *CallInfo, c Code, start time.Time) {
	ctx := s.Context()
	if l.Enabled(ctx, slog.LevelInfo) {
		p, _ := PeerFrom(ctx)
		l.LogAttrs(ctx, slog.LevelInfo, "rt: stream", slog.String("method", info.Method.FullName),
			slog.String("code", c.String()), slog.Duration("latency", time.Since(start)),
			slog.String("peer", p.addrString()), slog.String("principal", p.Principal),
			slog.Int64("sent", s.n.sent.Load()), slog.Int64("received", s.n.received.Load()))
	}
}

// StreamClientAccessLog returns a stream interceptor that logs one line
// per stream to l at Info level when the stream ends: method, code,
// latency, provider and tries as ClientAccessLog's line has them, and the
// messages sent and received. A stream ends, for its line, at the first
// of: RecvMsg returning io.EOF (code OK) or an error; SendMsg failing with
// a code other than FailedPrecondition (that code, like io.EOF, means the
// stream ended or was half-closed already, and RecvMsg tells its status);
// the stream's context ending (Canceled, DeadlineExceeded) while no
// RecvMsg waits; opening it failing. A stream its caller neither reads to the
// end nor cancels has no line, as it is not over. Give it with
// WithStreamClientInterceptors (first, to time the other interceptors
// too); it is safe for concurrent use, and the stream it returns is as
// safe as the one it wraps. It costs a clock reading, a wrapper of the
// stream, a context.AfterFunc on the stream's Context (which the stream
// makes for its first caller), what OnAttempt keeps and a log record per
// stream, and a few atomic operations per message.
func StreamClientAccessLog(l *slog.Logger) StreamClientInterceptor {
	return func(ctx context.Context, info *CallInfo, next Streamer) (ClientStreamer, error) {
		start := time.Now()
		t := new(tries)
		OnAttempt(ctx, t.add)
		cs, err := next(ctx, info)
		if err != nil {
			logClientStream(ctx, l, info, err, start, t, 0, 0)
			return nil, err
		}
		s := &loggedClientStream{ClientStreamer: cs, l: l, info: info, start: start, tries: t}
		sctx := cs.Context()
		stop := context.AfterFunc(sctx, func() { s.contextDone(sctx.Err()) })
		s.mu.Lock()
		s.stop = stop
		s.mu.Unlock()
		return s, nil
	}
}

// logClientStream writes StreamClientAccessLog's line of a stream that
// ended with err.
func logClientStream(ctx context.Context, l *slog.Logger, info *CallInfo, err error, start time.Time, t *tries, sent, received int64) {
	if l.Enabled(ctx, slog.LevelInfo) {
		n, addr := t.result()
		l.LogAttrs(ctx, slog.LevelInfo, "rt: stream", slog.String("method", info.Method.FullName),
			slog.String("code", CodeOf(err).String()), slog.Duration("latency", time.Since(start)),
			slog.String("provider", addr), slog.Int("tries", n),
			slog.Int64("sent", sent), slog.Int64("received", received))
	}
}

// loggedClientStream is a client stream that logs its end.
type loggedClientStream struct {
	ClientStreamer
	l     *slog.Logger
	info  *CallInfo
	start time.Time
	tries *tries
	n     messageCounts

	mu      sync.Mutex
	recving int         // RecvMsg calls under way
	late    error       // the context's error, when it ended while a RecvMsg waited
	over    bool        // the line is claimed: written, or being written
	stop    func() bool // stops the context's AfterFunc
}

func (s *loggedClientStream) SendMsg(m Message) error {
	err := s.ClientStreamer.SendMsg(m)
	s.n.count(true, err)
	if err != nil && err != io.EOF && CodeOf(err) != FailedPrecondition {
		s.mu.Lock()
		over := s.claim()
		s.mu.Unlock()
		if over {
			s.end(err)
		}
	}
	return err
}

func (s *loggedClientStream) RecvMsg(m Message) error {
	s.mu.Lock()
	s.recving++
	s.mu.Unlock()
	err := s.ClientStreamer.RecvMsg(m)
	s.n.count(false, err)
	end := err
	if err == io.EOF {
		end = nil
	}
	// The end is claimed with recving lowered, under one lock: the
	// stream's context ends before RecvMsg returns the stream's end, and
	// contextDone must not take that for the end.
	s.mu.Lock()
	s.recving--
	over := false
	switch {
	case err != nil:
		over = s.claim()
	case s.late != nil: // the stream is over; its next RecvMsg would say so
		end, over = s.late, s.claim()
	}
	s.mu.Unlock()
	if over {
		s.end(end)
	}
	return err
}

// contextDone ends the stream's line when its context ends with err,
// unless a RecvMsg waits: that returns at once with the stream's own
// status (which may be OK: the stream ending also ends its context).
func (s *loggedClientStream) contextDone(err error) {
	s.mu.Lock()
	over := false
	if s.recving > 0 {
		s.late = err
	} else {
		over = s.claim()
	}
	s.mu.Unlock()
	if over {
		s.end(err)
	}
}

// claim reports whether the caller is the one to write the line; s.mu
// is held.
func (s *loggedClientStream) claim() bool {
	if s.over {
		return false
	}
	s.over = true
	return true
}

// end writes the stream's line with err's code; the caller has claimed
// it.
func (s *loggedClientStream) end(err error) {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	logClientStream(s.Context(), s.l, s.info, err, s.start, s.tries, s.n.sent.Load(), s.n.received.Load())
}
