package rt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/yrpc/yrpc/rt/codec"
)

// sharedMsg decodes as generated messages do: its string shares the
// bytes that UnmarshalOwned is given, whose capacity it notes.
type sharedMsg struct {
	S   string
	cap int
}

func (m *sharedMsg) Size() int                     { return len(m.S) }
func (m *sharedMsg) MarshalAppend(b []byte) []byte { return append(b, m.S...) }
func (m *sharedMsg) Unmarshal(b []byte) error      { return m.UnmarshalOwned(bytes.Clone(b)) }
func (m *sharedMsg) UnmarshalOwned(b []byte) error {
	m.S, m.cap = codec.String(b), cap(b)
	return nil
}

// copiedMsg has no UnmarshalOwned.
type copiedMsg struct{ S string }

func (m *copiedMsg) Size() int                     { return len(m.S) }
func (m *copiedMsg) MarshalAppend(b []byte) []byte { return append(b, m.S...) }
func (m *copiedMsg) Unmarshal(b []byte) error      { m.S = string(b); return nil }

// inRecord reports whether s lies in the memory allocated with the call
// record whose context is ctx.
func inRecord(ctx *callCtx, s string) bool {
	rec := uintptr(unsafe.Pointer(ctx)) - unsafe.Offsetof(serverCall{}.ctx)
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return len(s) > 0 && p >= rec && p < rec+4864
}

// newServerCall copies a request of up to 4.5 KiB of a message with
// UnmarshalOwned into its record, in one allocation at most 1/8 larger
// than the record and a copy of the request; other requests are
// decoded by Unmarshal; either way the request owns its bytes.
func TestNewServerCall(t *testing.T) {
	for _, tc := range []struct {
		n      int
		copied bool // the message has no UnmarshalOwned
		room   bool // want the request in the record
	}{
		{0, false, false},
		{1, false, true},
		{128, false, true},
		{129, false, true},
		{581, false, true},
		{3857, false, true}, // the worst fit
		{4096, false, true},
		{4864 - callSize - mallocHeader, false, true},
		{4865 - callSize - mallocHeader, false, false},
		{64 << 10, false, false},
		{581, true, false},
	} {
		t.Run(fmt.Sprintf("%d/copied=%v", tc.n, tc.copied), func(t *testing.T) {
			body := bytes.Repeat([]byte{'b'}, tc.n)
			var req Message = new(sharedMsg)
			if tc.copied {
				req = new(copiedMsg)
			}
			sc, err := newServerCall(req, body)
			if err != nil {
				t.Fatal(err)
			}
			clear(body) // the request must not share the frame's bytes
			got := decoded(req)
			if got != strings.Repeat("b", tc.n) {
				t.Fatalf("decoded %q", got)
			}
			if in := inRecord(&sc.ctx, got); in != tc.room {
				t.Errorf("request in the record: %v, want %v", in, tc.room)
			}
			if m, ok := req.(*sharedMsg); ok && tc.room && m.cap != tc.n {
				t.Errorf("UnmarshalOwned got room of capacity %d for %d bytes: appends would write over the record", m.cap, tc.n)
			}
			want := 2.0 // the record, and Unmarshal's copy
			if tc.room || tc.n == 0 {
				want = 1
			}
			// Many runs: what other tests' goroutines still allocate meanwhile is
			// counted too, and must not reach one per run.
			if got := testing.AllocsPerRun(1000, func() { _, _ = newServerCall(req, body) }); got != want {
				t.Errorf("%v allocations, want %v", got, want)
			}
			if !tc.room || strconv.IntSize == 32 {
				// callWithRoom's classes are those of 64-bit platforms:
				// on 32 bits the fit is only as good as it happens to be.
				return
			}
			var sc2 *serverCall
			var sink []byte
			size := bytesPerRun(func() { _, _ = newServerCall(req, body) })
			two := bytesPerRun(func() { sc2, sink = new(serverCall), make([]byte, tc.n) })
			if size*8 > two*9 {
				t.Errorf("%d bytes allocated, over 9/8 of the %d of the record and a copy of the request", size, two)
			}
			_, _ = sc2, sink
		})
	}
}

// bytesPerRun is the bytes that f allocates, on average over 100 runs.
func bytesPerRun(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / 100
}

// decoded is the string of a sharedMsg or a copiedMsg.
func decoded(m Message) string {
	switch m := m.(type) {
	case *sharedMsg:
		return m.S
	case *copiedMsg:
		return m.S
	}
	return ""
}

// TestKeptRequestReleasesConn: a request's string shares its call's record
// (newServerCall), so a handler that keeps the string keeps the record;
// once the call is over, the record must not keep the connection (and its
// buffers) alive, and the handler's context must stay usable.
func TestKeptRequestReleasesConn(t *testing.T) {
	type kept struct {
		s   string
		ctx context.Context
	}
	keep := make(chan kept, 1)
	srv := NewServer()
	desc := ServiceDesc{
		Name: "test.Keep",
		Methods: []MethodDesc{{
			Name: "Keep", FullName: "test.Keep/Keep", ID: 0x2101,
			NewRequest:  func() Message { return new(sharedMsg) },
			NewResponse: func() Message { return new(sharedMsg) },
			Handle: func(_ any, ctx context.Context, req Message) (Message, error) {
				keep <- kept{req.(*sharedMsg).S, ctx}
				return &sharedMsg{S: "ok"}, nil
			},
		}},
		MethodIndex: func(id uint32) int {
			if id == 0x2101 {
				return 0
			}
			return -1
		},
	}
	srv.RegisterService(&desc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background(), lis)
	defer srv.Close()
	cli, err := NewClient(WithAddrs(lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("k", 581)
	if err := cli.Invoke(context.Background(), &desc, 0, &sharedMsg{S: want}, new(sharedMsg)); err != nil {
		t.Fatal(err)
	}
	k := <-keep
	if !inRecord(k.ctx.(*callCtx), k.s) {
		t.Fatalf("the request's string is not in its call's record: the test tests nothing")
	}
	gone := make(chan struct{})
	srv.mu.Lock()
	for c := range srv.conns {
		runtime.AddCleanup(c, func(ch chan struct{}) { close(ch) }, gone)
	}
	n := len(srv.conns)
	srv.mu.Unlock()
	if n != 1 {
		t.Fatalf("the server has %d connections, want 1", n)
	}
	cli.Close()
	srv.Close() // returns once the connection is closed and its calls are done

	collected := false
	for i := 0; i < 100 && !collected; i++ {
		runtime.GC()
		select {
		case <-gone:
			collected = true
		default:
			runtime.Gosched() // cleanups run on a goroutine of their own
		}
	}
	if !collected {
		t.Error("the connection is not collected while a handler keeps a request's string")
	}

	// The handler's context, kept past its call, still works.
	if k.s != want {
		t.Errorf("kept request string changed: %d bytes", len(k.s))
	}
	select {
	case <-k.ctx.Done():
	default:
		t.Error("the context of an ended call is not done")
	}
	if err := k.ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() = %v, want %v", err, context.Canceled)
	}
	if PeerAddr(k.ctx) == nil {
		t.Error("PeerAddr of an ended call's context is nil")
	}
	if ci, ok := CallInfoFrom(k.ctx); !ok || ci.Method.FullName != "test.Keep/Keep" {
		t.Errorf("CallInfoFrom = %v, %v", ci, ok)
	}
	if DropConnection(k.ctx) {
		t.Error("DropConnection reports true for an ended call")
	}
	if SetResponseMetadata(k.ctx, "k", "v") {
		t.Error("SetResponseMetadata reports true for an ended call")
	}
}
