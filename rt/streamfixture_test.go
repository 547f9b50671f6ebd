package rt_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// feedImpl serves test.Feed's streams; what each does depends on the
// first message, as testImpl's unary calls do.
type feedImpl struct {
	started  chan string // the first message of each stream
	ended    chan error  // each handler's error (nil: returned normally)
	received atomic.Int64
	// refuse, when not OK, is the code Count ends every stream with
	// before its first message (a failing provider).
	refuse  atomic.Int32
	refused atomic.Int64 // streams refused so far
	// stalled gets the stream of each Echo that stalls, for a look at
	// what it holds.
	stalled chan rt.ServerStreamer
	// release ends a Count that holds (one per value).
	release chan struct{}
}

func newFeedImpl() *feedImpl {
	return &feedImpl{started: make(chan string, 2000), ended: make(chan error, 2000), stalled: make(chan rt.ServerStreamer, 10), release: make(chan struct{}, 100)}
}

// count answers "N" with N messages "0", "1", ...; "fail:N" with N
// messages and then NotFound; "block" waits for the stream's end; "hold"
// sends one message and ends with OK on release; "drop" drops the
// connection. While refuse is set it only fails.
func (f *feedImpl) count(ss rt.ServerStreamer) (err error) {
	defer func() { f.ended <- err }()
	var req msg
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	if code := rt.Code(f.refuse.Load()); code != rt.OK {
		f.refused.Add(1)
		return rt.Errorf(code, "refused by the test")
	}
	f.started <- req.S
	switch req.S {
	case "block":
		<-ss.Context().Done()
		return ss.Context().Err()
	case "drop":
		rt.DropConnection(ss.Context())
		return rt.Errorf(rt.Unavailable, "dropped by the test")
	case "hold":
		if err := ss.SendMsg(&msg{S: "0"}); err != nil {
			return err
		}
		select {
		case <-f.release:
			return nil
		case <-ss.Context().Done():
			return ss.Context().Err()
		}
	}
	n, failAfter := req.S, false
	if s, ok := strings.CutPrefix(req.S, "fail:"); ok {
		n, failAfter = s, true
	}
	count, _ := strconv.Atoi(n)
	for i := range count {
		if err := ss.SendMsg(&msg{S: strconv.Itoa(i)}); err != nil {
			return err
		}
	}
	ss.SetTrailer(rt.MD{"sent", strconv.Itoa(count)})
	if failAfter {
		return rt.Errorf(rt.NotFound, "no more after %d", count)
	}
	return nil
}

// sum reads messages until the client half-closes and answers with how
// many came and the last one.
func (f *feedImpl) sum(ss rt.ServerStreamer) (err error) {
	defer func() { f.ended <- err }()
	n, last := 0, ""
	for {
		var m msg
		err := ss.RecvMsg(&m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n == 0 {
			f.started <- m.S
		}
		n++
		last = m.S
		f.received.Add(1)
	}
	return ss.SendMsg(&msg{S: strconv.Itoa(n) + ":" + last})
}

// echo answers every message with itself until the client half-closes;
// "fail" ends the stream with Aborted, "stall" stops reading until the
// stream's context ends.
func (f *feedImpl) echo(ss rt.ServerStreamer) (err error) {
	defer func() { f.ended <- err }()
	first := true
	for {
		var m msg
		err := ss.RecvMsg(&m)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if first {
			f.started <- m.S
			first = false
		}
		switch m.S {
		case "fail":
			return rt.Errorf(rt.Aborted, "asked to fail")
		case "stall":
			select {
			case f.stalled <- ss:
			default:
			}
			<-ss.Context().Done()
			return ss.Context().Err()
		}
		if err := ss.SendMsg(&m); err != nil {
			return err
		}
	}
}

func streamMethod(name string, id uint32, kind rt.StreamKind, h func(*feedImpl, rt.ServerStreamer) error) rt.MethodDesc {
	return rt.MethodDesc{
		Name: name, FullName: "test.Feed/" + name, ID: id, Stream: kind,
		NewRequest:   func() rt.Message { return new(msg) },
		NewResponse:  func() rt.Message { return new(msg) },
		HandleStream: func(impl any, ss rt.ServerStreamer) error { return h(impl.(*feedImpl), ss) },
	}
}

var feedDesc = rt.ServiceDesc{
	Name: "test.Feed",
	Methods: []rt.MethodDesc{
		streamMethod("Count", 0x2001, rt.ServerStreaming, (*feedImpl).count),
		streamMethod("Sum", 0x2002, rt.ClientStreaming, (*feedImpl).sum),
		streamMethod("Echo", 0x2003, rt.BidiStreaming, (*feedImpl).echo),
	},
	MethodIndex: func(id uint32) int {
		if id >= 0x2001 && id <= 0x2003 {
			return int(id - 0x2001)
		}
		return -1
	},
}

// stream opens method m of test.Feed with the typed API generated code
// uses.
func stream(ctx context.Context, c *rt.Client, m int, opts ...rt.CallOption) (*rt.GenericClientStream[msg, msg], error) {
	cs, err := c.NewStream(ctx, &feedDesc, m, opts...)
	if err != nil {
		return nil, err
	}
	return &rt.GenericClientStream[msg, msg]{ClientStreamer: cs}, nil
}

// oldPeer serves lis as an older yrpc without streams: a version 1
// preface without features, then it answers each request with its own
// body (test.Echo/Echo's answer) and passes each oneway's body to oneways
// (if not nil). A stream frame would fail its reader and close the
// connection.
func oldPeer(lis net.Listener, oneways chan<- string) {
	fakePeer(lis, func(c net.Conn, f *wire.Frame) bool {
		switch f.Type {
		case wire.TypeRequest:
			if _, err := c.Write(wire.AppendFrame(nil, &wire.Header{Type: wire.TypeResponse, ID: f.ID}, nil, f.Body)); err != nil {
				return false
			}
		case wire.TypeOneway:
			select {
			case oneways <- string(f.Body):
			default:
			}
		}
		return true
	})
}

// fakePeer accepts connections on lis until it is closed. On each it
// exchanges prefaces as a yrpc server of the first protocol version does
// (no settings: no streams) and hands every frame it reads to onFrame,
// until onFrame returns false or the connection ends.
func fakePeer(lis net.Listener, onFrame func(c net.Conn, f *wire.Frame) bool) {
	for {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			if _, err := wire.ReadPreface(c); err != nil {
				return
			}
			if _, err := c.Write(wire.AppendPreface(nil, wire.Preface{Version: 1, MaxFrameSize: wire.DefaultMaxFrameSize})); err != nil {
				return
			}
			r := wire.NewReader(c, wire.ReaderOptions{})
			for {
				f, err := r.Next()
				if err != nil || !onFrame(c, f) {
					return
				}
			}
		}()
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
