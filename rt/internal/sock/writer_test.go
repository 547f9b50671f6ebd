package sock

import (
	"bytes"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// discardConn is a net.Conn that takes every write at once.
type discardConn struct {
	net.Conn
	n int
}

func (d *discardConn) Write(b []byte) (int, error)      { d.n += len(b); return len(b), nil }
func (d *discardConn) SetWriteDeadline(time.Time) error { return nil }

// A frame written by the caller, the steady state of a connection with one
// call at a time, allocates nothing: the buffer and its pool handle go back
// to the pool together.
func TestWriterAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under the race detector")
	}
	frame := make([]byte, 600)
	add := func(b []byte) []byte { return append(b, frame...) }
	for _, mode := range []WriteMode{Direct, Held} {
		nc := &discardConn{}
		w := NewWriter(nc, WriterOptions{})
		n := testing.AllocsPerRun(1000, func() {
			if err := w.Write(add, mode); err != nil {
				t.Fatal(err)
			}
			if err := w.FlushHeld(); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("mode %d: %v allocations per frame, want 0", mode, n)
		}
		if nc.n != 1001*len(frame) {
			t.Errorf("mode %d: %d bytes written, want %d", mode, nc.n, 1001*len(frame))
		}
		w.Close(net.ErrClosed)
	}
}

// gateConn is a net.Conn whose writes wait for open, recording what they
// were given.
type gateConn struct {
	net.Conn
	open   chan struct{}
	mu     sync.Mutex
	got    []byte
	writes int
}

func (g *gateConn) Write(b []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = append(g.got, b...)
	g.writes++
	return len(b), nil
}

func (g *gateConn) SetWriteDeadline(time.Time) error { return nil }

func (g *gateConn) written() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.got)
}

// A backlog queued behind a write in progress (a peer that reads slower
// than streams write) fills chunk after chunk: queueing a megabyte
// allocates about a megabyte, not the 2 MiB and the copies of a buffer
// grown by doubling. The frames still go out whole and in order.
func TestBacklogIsNotCopied(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	nc := &gateConn{open: make(chan struct{})}
	w := NewWriter(nc, WriterOptions{})
	defer w.Close(net.ErrClosed)
	frame := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 600) }
	// The first frame's write blocks in the loop; the rest queue behind.
	if err := w.Write(func(b []byte) []byte { return append(b, frame(0)...) }, Queued); err != nil {
		t.Fatal(err)
	}
	const frames = 1 << 20 / 600
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 1; i <= frames; i++ {
		f := frame(i)
		if err := w.WriteSized(len(f), func(b []byte) []byte { return append(b, f...) }, Queued); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	queued := frames * 600
	// The frames themselves (600 B each, made by the test) count too.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(2*queued+queued/4); got > limit {
		t.Errorf("queueing %d bytes allocated %d bytes, want at most %d", queued, got, limit)
	}
	close(nc.open)
	want := 600 * (frames + 1)
	for i := 0; i < 1000 && len(nc.written()) < want; i++ {
		if err := w.WaitBelow(0); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	got := nc.written()
	if len(got) != want {
		t.Fatalf("%d bytes written, want %d", len(got), want)
	}
	for i := range frames + 1 {
		if !bytes.Equal(got[i*600:(i+1)*600], frame(i)) {
			t.Fatalf("frame %d is not what was queued", i)
		}
	}
}

// A frame larger than a chunk, written with its size, gets a buffer of
// its own, allocated once, not grown append by append.
func TestLargeFrameSizedOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	const size = 300 << 10
	big := make([]byte, size)
	nc := &discardConn{}
	w := NewWriter(nc, WriterOptions{})
	defer w.Close(net.ErrClosed)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// Appended a kilobyte at a time, as a marshaler appends field by field.
	appendBig := func(b []byte) []byte {
		for p := big; len(p) > 0; p = p[1<<10:] {
			b = append(b, p[:1<<10]...)
		}
		return b
	}
	if err := w.WriteSized(size, appendBig, Direct); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*size {
		t.Errorf("a %d-byte frame allocated %d bytes, want at most %d", size, got, 2*size)
	}
	if nc.n != size {
		t.Errorf("%d bytes written, want %d", nc.n, size)
	}
}
