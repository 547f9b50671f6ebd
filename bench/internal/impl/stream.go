package impl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/yrpc/yrpc/bench/internal/harness"
)

// Grouped implementations are named GROUP/IMPL: the rows of one group are
// one benchmark run by several implementations, compared with each other
// only (package report). They are not in All, so "bench run" runs them only
// when named; Lookup finds them.
//
//   - feed/NAME: server-stream throughput. The client opens c streams (one
//     per worker) of the Streams.Feed method of ../../benchpb/stream.proto,
//     each asking for its share of the counted messages; a "call" is one
//     received and checked message, its latency the time since the
//     stream's previous message (or since the stream was opened).
//   - echo/NAME: bidirectional echo. The client opens a Streams.Echo stream
//     per worker when it dials; a call is one round trip on the worker's
//     stream (send the request, receive and check the reply).
//   - grpcc/NAME: gRPC-Go's client calling Hello.Say on NAME's server (the
//     gRPC endpoint of a default yrpc server, or gRPC-Go's own).
//   - native/NAME: yrpc's own protocol, with and without the gRPC endpoint
//     on the same port.
//
// FeedScale is the Scale of the feed rows: they count five times as many
// messages as the run's -n1 or -n.
const FeedScale = 5

// Grouped returns the grouped implementations compiled in: the feed and
// echo rows of yrpc (with the "yrpc" tag), gRPC-Go and drpc, then the
// grpcc and native rows.
func Grouped() []*Impl {
	yFeed, yEcho, yOthers := groupedYRPC()
	var all []*Impl
	all = append(all, yFeed...)
	all = append(all, grpcFeedImpl(), drpcFeedImpl())
	all = append(all, yEcho...)
	all = append(all, grpcEchoImpl(), drpcEchoImpl())
	all = append(all, &Impl{Name: "grpcc/grpc", Label: "gRPC-Go " + moduleVersion("google.golang.org/grpc") + " client → gRPC-Go server",
		Serve: serveGRPC, Dial: dialGRPC})
	all = append(all, yOthers...)
	for _, im := range all {
		if strings.HasPrefix(im.Name, "feed/") {
			im.Scale = FeedScale
		}
	}
	return all
}

// recver receives the messages of a stream.
type recver[M any] interface {
	Recv() (*M, error)
}

// bidi is a client's bidirectional stream.
type bidi[M any] interface {
	recver[M]
	Send(*M) error
	CloseSend() error
}

// feedClient drives a feed phase: c streams, opened by open on worker w's
// connection with worker w's request asking for n messages, read to their
// end; check checks each message against the request.
type feedClient[M any] struct {
	reqs  []*M
	open  func(ctx context.Context, w int, n int64) (recver[M], error)
	check func(reply, req *M) error
	close func() error
}

// Call is never used: feedClient is a harness.Driver.
func (f *feedClient[M]) Call(context.Context, int) error {
	return errors.New("impl: a feed client drives its phase")
}

func (f *feedClient[M]) Close() error { return f.close() }

// Drive opens c streams that share len(lat) messages, stream w taking the
// w-th slice of lat for the latencies of its messages.
func (f *feedClient[M]) Drive(ctx context.Context, c int, lat []time.Duration) (int, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  int
		first error
	)
	n := len(lat)
	for w := range c {
		part := lat[w*n/c : (w+1)*n/c]
		if len(part) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := f.stream(ctx, w, part)
			if err != nil {
				mu.Lock()
				errs += len(part) - got
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs, first
}

// stream runs one feed stream for len(lat) messages and returns how many
// arrived and checked.
func (f *feedClient[M]) stream(ctx context.Context, w int, lat []time.Duration) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	s, err := f.open(ctx, w, int64(len(lat)))
	if err != nil {
		return 0, err
	}
	for i := range lat {
		m, err := s.Recv()
		if err == nil {
			err = f.check(m, f.reqs[w])
		}
		if err != nil {
			return i, err
		}
		t1 := time.Now()
		lat[i] = t1.Sub(t0)
		t0 = t1
	}
	if _, err := s.Recv(); err != io.EOF {
		return len(lat), fmt.Errorf("impl: feed stream: after the last message: %v, want io.EOF", err)
	}
	return len(lat), nil
}

// echoClient makes one round trip on worker w's stream per call.
type echoClient[M any] struct {
	streams []bidi[M]
	reqs    []*M
	check   func(reply, req *M) error
	cancel  context.CancelFunc // of the streams' context
	close   func() error       // closes the connections
}

func (e *echoClient[M]) Call(_ context.Context, w int) error {
	s := e.streams[w]
	if err := s.Send(e.reqs[w]); err != nil {
		return err
	}
	m, err := s.Recv()
	if err != nil {
		return err
	}
	return e.check(m, e.reqs[w])
}

// Close half-closes every stream, waits for the server to end it, then
// closes the connections.
func (e *echoClient[M]) Close() error {
	var first error
	for _, s := range e.streams {
		if err := s.CloseSend(); err != nil && first == nil {
			first = err
		}
		if _, err := s.Recv(); err != io.EOF && first == nil {
			first = fmt.Errorf("impl: echo stream: after CloseSend: %v, want io.EOF", err)
		}
	}
	e.cancel()
	if err := e.close(); err != nil && first == nil {
		first = err
	}
	return first
}

// dialEcho opens an echo stream per worker with open, which receives the
// streams' context; close closes the connections. reqs are the workers'
// requests, one per worker.
func dialEcho[M any](reqs []*M, check func(reply, req *M) error, open func(ctx context.Context, w int) (bidi[M], error), close func() error) (harness.Client, error) {
	ctx, cancel := context.WithCancel(context.Background())
	e := &echoClient[M]{reqs: reqs, check: check, cancel: cancel, close: close}
	for w := range reqs {
		s, err := open(ctx, w)
		if err != nil {
			cancel()
			_ = close()
			return nil, fmt.Errorf("impl: opening echo stream %d: %w", w, err)
		}
		e.streams = append(e.streams, s)
	}
	return e, nil
}

// echoServe answers every message of a server's echo stream with answer's
// reply to it until the client half-closes.
func echoServe[M any](recv func() (*M, error), send func(*M) error, answer func(*M) *M) error {
	for {
		m, err := recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := send(answer(m)); err != nil {
			return err
		}
	}
}

// feedServe sends reply n times.
func feedServe[M any](n int64, reply *M, send func(*M) error) error {
	for range n {
		if err := send(reply); err != nil {
			return err
		}
	}
	return nil
}
