package sock

import (
	"net"
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
