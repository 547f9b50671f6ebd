package rt_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/wire"
)

// arrivalImpl is the service of TestTimesCountFromArrival: Block waits
// for release; Quick and the stream method Watch note when they started
// and their deadline.
type arrivalImpl struct {
	blockStarted chan time.Time
	release      chan struct{}
	quick        chan [2]time.Time // when Quick started, its deadline
	watch        chan [2]time.Time // when Watch started, its deadline
}

var arrivalDesc = rt.ServiceDesc{
	Name: "test.Arrival",
	Methods: []rt.MethodDesc{
		{
			Name: "Block", FullName: "test.Arrival/Block", ID: 0x2001,
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				a := impl.(*arrivalImpl)
				a.blockStarted <- time.Now()
				<-a.release
				return req, nil
			},
		},
		{
			Name: "Quick", FullName: "test.Arrival/Quick", ID: 0x2002,
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				start := time.Now()
				dl, _ := ctx.Deadline()
				impl.(*arrivalImpl).quick <- [2]time.Time{start, dl}
				return req, nil
			},
		},
		{
			Name: "Watch", FullName: "test.Arrival/Watch", ID: 0x2003, Stream: rt.BidiStreaming,
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			HandleStream: func(impl any, ss rt.ServerStreamer) error {
				start := time.Now()
				dl, _ := ss.Context().Deadline()
				impl.(*arrivalImpl).watch <- [2]time.Time{start, dl}
				return nil
			},
		},
	},
	MethodIndex: func(id uint32) int {
		if id >= 0x2001 && id <= 0x2003 {
			return int(id - 0x2001)
		}
		return -1
	},
}

// TestTimesCountFromArrival: a call's or stream's deadline and its server
// latency count from when its request or open frame was read off the
// connection, not from when its handler started. Block, Quick and a
// Watch stream arrive in one write; Block holds the reading goroutine
// until the watchdog hands reading to a worker, which serves Quick and
// opens Watch: their latencies then cover their wait from before Block
// started, and their deadlines are at most their timeout after that.
func TestTimesCountFromArrival(t *testing.T) {
	checkLeaks(t)
	impl := &arrivalImpl{blockStarted: make(chan time.Time, 1), release: make(chan struct{}),
		quick: make(chan [2]time.Time, 1), watch: make(chan [2]time.Time, 1)}
	events := map[string]chan metrics.Event{"Quick": make(chan metrics.Event, 1), "Watch": make(chan metrics.Event, 1)}
	srv := rt.NewServer(rt.WithObserver(metrics.ObserverFunc(func(e metrics.Event) {
		if ch := events[e.Method]; e.Side == metrics.Server && ch != nil {
			ch <- e
		}
	})))
	srv.RegisterService(&arrivalDesc, impl)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	defer func() {
		srv.Close()
		<-done
	}()

	const timeout = time.Hour
	raw, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := wire.ClientHandshake(raw, wire.FeatureStreams, wire.Settings{}); err != nil {
		t.Fatal(err)
	}
	b := wire.AppendFrame(nil, &wire.Header{Type: wire.TypeRequest, ID: 1, Method: 0x2001}, nil, nil)
	b = wire.AppendFrame(b, &wire.Header{Type: wire.TypeRequest, ID: 3, Method: 0x2002, Timeout: timeout}, nil, nil)
	b = wire.AppendStreamOpen(b, 5, 0x2003, timeout, nil)
	if _, err := raw.Write(b); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	wait := func(ch <-chan [2]time.Time, what string) [2]time.Time {
		t.Helper()
		select {
		case v := <-ch:
			return v
		case <-ctx.Done():
			t.Fatal(what)
			return [2]time.Time{}
		}
	}
	var blockStart time.Time
	select {
	case blockStart = <-impl.blockStarted:
	case <-ctx.Done():
		t.Fatal("Block did not start")
	}
	started := map[string][2]time.Time{
		"Quick": wait(impl.quick, "Quick was not served while Block held the reading goroutine"),
		"Watch": wait(impl.watch, "Watch did not start while Block held the reading goroutine"),
	}
	for name, s := range started {
		var ev metrics.Event
		select {
		case ev = <-events[name]:
		case <-ctx.Done():
			t.Fatalf("no server event for %s", name)
		}
		if waited := s[0].Sub(blockStart); ev.Latency < waited {
			t.Errorf("%s's server latency %v is less than its wait behind Block (%v): it does not count from the frame's arrival", name, ev.Latency, waited)
		}
		if latest := blockStart.Add(timeout); s[1].After(latest) {
			t.Errorf("%s's deadline is %v after Block started plus its timeout: it does not count from the frame's arrival", name, s[1].Sub(latest))
		}
	}
	close(impl.release)
}
