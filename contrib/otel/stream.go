package otel

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/yrpc/yrpc/rt"
)

// The rpc.message span event and its attributes, as the conventions up to
// v1.39.0 define them; v1.40.0 deprecated the event, and the semconv
// packages from v1.40.0 on no longer declare its keys.
const (
	messageEvent   = "rpc.message"
	messageTypeKey = attribute.Key("rpc.message.type")
	messageIDKey   = attribute.Key("rpc.message.id")
	messageSizeKey = attribute.Key("rpc.message.uncompressed_size")
)

// streamSpan is the span of one stream and what it has counted. Safe for
// concurrent use, as rt's streams are.
type streamSpan struct {
	in       *instruments
	m        *method
	ctx      context.Context // carries span
	span     trace.Span
	start    time.Time
	sent     atomic.Int64
	received atomic.Int64
	tries    *tries // a sampled client stream's; nil otherwise
}

// message counts a message sent (sent) or received and adds its
// rpc.message event; n is the counter of its direction.
func (s *streamSpan) message(typ string, n *atomic.Int64, msg rt.Message) {
	id := n.Add(1)
	if s.in.events && s.span.IsRecording() {
		s.span.AddEvent(messageEvent, trace.WithAttributes(
			messageTypeKey.String(typ), messageIDKey.Int64(id), messageSizeKey.Int(msg.Size())))
	}
}

// end ends the span with err's status and records the stream's
// duration; it is called once.
func (s *streamSpan) end(err error) {
	if s.tries != nil {
		s.tries.end()
	}
	s.in.finish(s.ctx, s.span, s.m, err, s.start)
	s.span.End()
}

// NewStreamClientInterceptor returns a stream interceptor that makes a
// client span for every stream the client opens, injects its trace context
// into the stream's request metadata, adds an rpc.message event for every
// message sent and received, and records rpc.client.call.duration when the
// stream ends. The span ends, with the stream's status, at the first of:
// RecvMsg returning io.EOF (OK) or an error; SendMsg failing with a code
// other than FAILED_PRECONDITION (the stream is over then; that code may
// mean a send after CloseSend, or a stream the server ended with OK, whose
// status RecvMsg tells); the stream's context ending (CANCELLED or
// DEADLINE_EXCEEDED) while no RecvMsg waits; opening the stream failing.
// A stream its caller neither reads to the end nor cancels keeps its span
// open, as it keeps the stream. Install it with
// rt.WithStreamClientInterceptors, first. The interceptor is safe for
// concurrent use.
func NewStreamClientInterceptor(o Options) rt.StreamClientInterceptor {
	in := newInstruments(clientSide, o)
	return func(ctx context.Context, info *rt.CallInfo, next rt.Streamer) (rt.ClientStreamer, error) {
		m := in.method(info)
		start := time.Now()
		ctx, span := in.startClient(ctx, m)
		s := &clientStream{streamSpan: streamSpan{in: in, m: m, ctx: ctx, span: span, start: start}}
		if span.IsRecording() {
			s.tries = &tries{span: span}
			rt.OnAttempt(ctx, s.tries.add)
		}
		cs, err := next(ctx, info)
		if err != nil {
			s.end(err)
			return nil, err
		}
		s.ClientStreamer = cs
		streamCtx := cs.Context()
		stop := context.AfterFunc(streamCtx, func() { s.contextDone(streamCtx) })
		s.mu.Lock()
		s.stop = stop
		s.mu.Unlock()
		return s, nil
	}
}

// clientStream is a traced client stream.
type clientStream struct {
	rt.ClientStreamer
	streamSpan

	mu      sync.Mutex
	recving int         // RecvMsg calls under way
	late    error       // the context's error, when it ended while RecvMsg waited
	over    bool        // the span's end is decided
	stop    func() bool // stops the context's AfterFunc
}

func (s *clientStream) SendMsg(m rt.Message) error {
	err := s.ClientStreamer.SendMsg(m)
	switch {
	case err == nil:
		s.message("SENT", &s.sent, m)
	case err != io.EOF && rt.CodeOf(err) != rt.FailedPrecondition:
		s.mu.Lock()
		over := s.claim()
		s.mu.Unlock()
		if over {
			s.finish(err)
		}
	}
	return err
}

func (s *clientStream) RecvMsg(m rt.Message) error {
	s.mu.Lock()
	s.recving++
	s.mu.Unlock()
	err := s.ClientStreamer.RecvMsg(m)
	end := err
	if err == io.EOF {
		end = nil
	}
	s.mu.Lock()
	s.recving--
	over := false
	switch {
	case err != nil:
		over = s.claim()
	case s.late != nil: // the stream is over; the next RecvMsg says so
		end, over = s.late, s.claim()
	}
	s.mu.Unlock()
	if err == nil {
		s.message("RECEIVED", &s.received, m)
	}
	if over {
		s.finish(end)
	}
	return err
}

// contextDone ends the span when the stream's context ctx ends, unless a
// RecvMsg waits: that returns at once, with the stream's own status (rt
// also cancels the context when RecvMsg sees the end of the stream).
func (s *clientStream) contextDone(ctx context.Context) {
	s.mu.Lock()
	over := false
	if s.recving > 0 {
		s.late = ctx.Err()
	} else {
		over = s.claim()
	}
	s.mu.Unlock()
	if over {
		s.finish(ctx.Err())
	}
}

// claim reports whether the caller is the one to end the span; s.mu is
// held.
func (s *clientStream) claim() bool {
	if s.over {
		return false
	}
	s.over = true
	return true
}

// finish ends the span with err's status and stops watching the context;
// the caller has claimed the end.
func (s *clientStream) finish(err error) {
	s.end(err)
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// NewStreamServerInterceptor returns a stream interceptor that extracts
// the caller's trace context from the stream's request metadata, runs the
// handler under a server span that is its child (the handler's
// ss.Context() carries it), adds an rpc.message event for every message
// sent and received, and, when the handler returns, ends the span with its
// status and records rpc.server.call.duration; a handler that panics (rt
// ends the stream with INTERNAL) ends its span with INTERNAL. Install it
// with rt.WithStreamServerInterceptors, first. The interceptor is safe for
// concurrent use.
func NewStreamServerInterceptor(o Options) rt.StreamServerInterceptor {
	in := newInstruments(serverSide, o)
	return func(ss rt.ServerStreamer, info *rt.CallInfo, next rt.StreamHandler) error {
		m := in.serverMethod(ss.Context(), info)
		start := time.Now()
		ctx, span := in.startServer(ss.Context(), m)
		s := &serverStream{ServerStreamer: ss, streamSpan: streamSpan{in: in, m: m, ctx: ctx, span: span, start: start}}
		returned := false
		defer func() {
			if !returned {
				in.panicked(ctx, span, m, start)
			}
		}()
		err := next(s)
		returned = true
		s.end(err)
		return err
	}
}

// serverStream is a traced server stream.
type serverStream struct {
	rt.ServerStreamer
	streamSpan
}

func (s *serverStream) Context() context.Context { return s.ctx }

func (s *serverStream) SendMsg(m rt.Message) error {
	err := s.ServerStreamer.SendMsg(m)
	if err == nil {
		s.message("SENT", &s.sent, m)
	}
	return err
}

func (s *serverStream) RecvMsg(m rt.Message) error {
	err := s.ServerStreamer.RecvMsg(m)
	if err == nil {
		s.message("RECEIVED", &s.received, m)
	}
	return err
}
