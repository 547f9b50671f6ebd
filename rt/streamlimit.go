package rt

import (
	"context"
	"errors"
	"time"

	"github.com/yrpc/yrpc/limiter"
)

// StreamRecvLimit returns a stream server interceptor that paces the
// messages each stream's handler receives: at most p.Rate per second,
// with bursts of p.Burst (at least 1), from a token bucket of the
// stream's own. RecvMsg takes a token, waiting for one, before it returns
// a message (not before io.EOF: the end is not delayed). Nothing is
// refused: while the handler waits, the stream's next messages stay
// unread, its flow-control window fills and the client's Send waits in
// turn, so a fast client is slowed down to the rate rather than failed.
// A method's rate limit (ServicePolicy.RateLimit, ClientRateLimit)
// counts streams opened; this counts their messages.
//
// A wait that its stream's deadline would cut short fails at once with
// ResourceExhausted. The stream's end (the client's cancel, the
// connection's loss) ends a wait: RecvMsg returns the message it waited
// with, and the handler's next call on the stream reports the stream's
// status. p.Rate <= 0 means no limit. clock is the clock the waits run
// on; nil means the system clock.
func StreamRecvLimit(p RateLimitPolicy, clock Clock) StreamServerInterceptor {
	if p.Rate <= 0 {
		return func(ss ServerStreamer, _ *CallInfo, next StreamHandler) error { return next(ss) }
	}
	lc := limiterClock{clockOrSystem(clock)}
	return func(ss ServerStreamer, info *CallInfo, next StreamHandler) error {
		b := limiter.NewBucket(p.Rate, max(p.Burst, 1))
		return next(&pacedServerStream{ServerStreamer: ss, pace: pace{b: b, clock: lc, name: info.Method.FullName}})
	}
}

// StreamSendLimit returns a stream client interceptor that paces the
// messages each stream sends as StreamRecvLimit paces those a server
// receives: SendMsg waits for a token of the stream's own bucket first.
func StreamSendLimit(p RateLimitPolicy, clock Clock) StreamClientInterceptor {
	if p.Rate <= 0 {
		return func(ctx context.Context, info *CallInfo, next Streamer) (ClientStreamer, error) {
			return next(ctx, info)
		}
	}
	lc := limiterClock{clockOrSystem(clock)}
	return func(ctx context.Context, info *CallInfo, next Streamer) (ClientStreamer, error) {
		cs, err := next(ctx, info)
		if err != nil {
			return nil, err
		}
		b := limiter.NewBucket(p.Rate, max(p.Burst, 1))
		return &pacedClientStream{ClientStreamer: cs, pace: pace{b: b, clock: lc, name: info.Method.FullName}}, nil
	}
}

// pace is one stream's token bucket.
type pace struct {
	b     *limiter.Bucket
	clock limiter.Clock
	name  string // the method, for errors
}

// wait takes a token, waiting on the clock for one. An error ends the
// stream's RecvMsg or SendMsg; when the stream ended during the wait, wait
// returns nil and the stream's own RecvMsg or SendMsg tells how it ended.
func (p *pace) wait(ctx context.Context) error {
	err := p.b.Wait(ctx, p.clock)
	switch {
	case err == nil, ctx.Err() != nil:
		return nil
	case errors.Is(err, limiter.ErrDeadline):
		return &Error{Code: ResourceExhausted, Message: p.name + ": the stream's message rate limit would wait past its deadline", Cause: err}
	}
	return &Error{Code: ResourceExhausted, Message: p.name + ": stream message rate limit: " + err.Error(), Cause: err}
}

type pacedServerStream struct {
	ServerStreamer
	pace pace
}

func (s *pacedServerStream) RecvMsg(m Message) error {
	if err := s.ServerStreamer.RecvMsg(m); err != nil {
		return err
	}
	return s.pace.wait(s.Context())
}

type pacedClientStream struct {
	ClientStreamer
	pace pace
}

func (s *pacedClientStream) SendMsg(m Message) error {
	if err := s.pace.wait(s.Context()); err != nil {
		return err
	}
	return s.ClientStreamer.SendMsg(m)
}

// limiterClock runs a limiter's waits on a Clock.
type limiterClock struct{ Clock }

func (c limiterClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-c.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func clockOrSystem(c Clock) Clock {
	if c == nil {
		return systemClock{}
	}
	return c
}
