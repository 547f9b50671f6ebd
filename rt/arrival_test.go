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
// for release, Quick notes when it started and its deadline.
type arrivalImpl struct {
	blockStarted chan time.Time
	release      chan struct{}
	quick        chan [2]time.Time // when Quick started, its deadline
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
	},
	MethodIndex: func(id uint32) int {
		if id == 0x2001 || id == 0x2002 {
			return int(id - 0x2001)
		}
		return -1
	},
}

// TestTimesCountFromArrival: a call's deadline and its server latency
// count from when its request was read off the connection, not from when
// its handler started. Block and Quick arrive in one write; Block holds
// the reading goroutine until the watchdog hands reading to a worker,
// which serves Quick: Quick's latency then covers its wait from before
// Block started, and its deadline is at most its timeout after that.
func TestTimesCountFromArrival(t *testing.T) {
	checkLeaks(t)
	impl := &arrivalImpl{blockStarted: make(chan time.Time, 1), release: make(chan struct{}), quick: make(chan [2]time.Time, 1)}
	events := make(chan metrics.Event, 4)
	srv := rt.NewServer(rt.WithObserver(metrics.ObserverFunc(func(e metrics.Event) {
		if e.Side == metrics.Server && e.Method == "Quick" {
			events <- e
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
	raw := rawConn(t, lis.Addr().String())
	b := wire.AppendFrame(nil, &wire.Header{Type: wire.TypeRequest, ID: 1, Method: 0x2001}, nil, nil)
	b = wire.AppendFrame(b, &wire.Header{Type: wire.TypeRequest, ID: 3, Method: 0x2002, Timeout: timeout}, nil, nil)
	if _, err := raw.Write(b); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	var blockStart time.Time
	var quick [2]time.Time
	var ev metrics.Event
	select {
	case blockStart = <-impl.blockStarted:
	case <-ctx.Done():
		t.Fatal("Block did not start")
	}
	select {
	case quick = <-impl.quick:
	case <-ctx.Done():
		t.Fatal("Quick was not served while Block held the reading goroutine")
	}
	select {
	case ev = <-events:
	case <-ctx.Done():
		t.Fatal("no server event for Quick")
	}
	close(impl.release)

	if waited := quick[0].Sub(blockStart); ev.Latency < waited {
		t.Errorf("Quick's server latency %v is less than its wait behind Block (%v): it does not count from the request's arrival", ev.Latency, waited)
	}
	if latest := blockStart.Add(timeout); quick[1].After(latest) {
		t.Errorf("Quick's deadline is %v after Block started plus its timeout: it does not count from the request's arrival", quick[1].Sub(latest))
	}
}
