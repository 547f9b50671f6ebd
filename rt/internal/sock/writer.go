package sock

import (
	"net"
	"runtime"
	"sync"
	"time"
)

// Writer batches frames onto one connection. A goroutine that appends a
// frame while nobody is writing writes it itself, with no hand-off (the
// common case at low load). Frames appended while a write is in progress
// wait in a buffer that the background loop flushes with one syscall, so
// under load many frames share each write.
type Writer struct {
	nc   net.Conn
	kick chan struct{} // wakes loop; capacity 1

	mu       sync.Mutex
	buf      []byte // frames waiting to be written
	spare    []byte // the other buffer, reused
	flushing bool   // a goroutine owns the socket for writing
	err      error  // sticky write error
	done     bool

	wdl time.Time // the socket's write deadline; only its owner touches it
}

const maxIdleWriteBuf = 1 << 20 // larger buffers are dropped after use

func NewWriter(nc net.Conn) *Writer {
	return &Writer{nc: nc, kick: make(chan struct{}, 1), buf: make([]byte, 0, 16<<10), spare: make([]byte, 0, 16<<10)}
}

// WriteMode says when a frame handed to Writer.write goes out.
type WriteMode uint8

const (
	// Queued hands the frame to the writer loop, which lets other
	// goroutines add theirs before it writes them all with one syscall.
	Queued WriteMode = iota
	// Direct writes the frame on the calling goroutine when nobody
	// else is writing: no hand-off, the lowest latency when the
	// connection has no other call in flight.
	Direct
	// Held only appends the frame: the caller is about to add more
	// and promises to call flushHeld, so that a batch of frames goes out
	// with one syscall and no hand-off. A concurrent writer may send the
	// frame earlier, and past maxHeldBytes it is written as with
	// Direct, so that the peer can start on the first answers of a
	// long batch while the rest are computed.
	Held
)

// maxHeldBytes bounds the frames held back by Held (measured at 64
// and 256 concurrent calls: 8–16 KiB did at least as well as holding a
// whole 64 KiB read's answers, and starts the peer sooner).
const maxHeldBytes = 16 << 10

// write appends one frame with fn and makes sure it gets written as mode
// says. fn must append the whole frame to its argument and return the
// result; it runs under the writer's lock, so it must be quick and must
// not call back.
func (w *Writer) Write(fn func([]byte) []byte, mode WriteMode) error {
	return w.WriteBefore(fn, mode, time.Time{})
}

// writeBefore is write for a caller with a deadline (zero: none): if the
// caller ends up writing itself, the write fails once dl passes, and the
// connection with it, so that a peer that stops reading cannot hold the
// caller past its deadline. The frames of others queued behind a stalled
// write are lost with the connection, as they would be when it breaks.
func (w *Writer) WriteBefore(fn func([]byte) []byte, mode WriteMode, dl time.Time) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.buf = fn(w.buf)
	if w.flushing || mode == Held && len(w.buf) < maxHeldBytes {
		w.mu.Unlock()
		return nil
	}
	w.flushing = true
	if mode == Queued {
		w.kickLocked()
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	return w.flushOwned(dl)
}

// flushHeld writes the frames appended with Held, on the calling
// goroutine, unless another goroutine is writing already (it writes them
// too).
func (w *Writer) FlushHeld() error {
	w.mu.Lock()
	if w.flushing || w.err != nil || len(w.buf) == 0 {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.flushing = true
	w.mu.Unlock()
	return w.flushOwned(time.Time{})
}

// flushOwned writes what is pending, failing at dl (zero: never); the
// caller has set flushing. Frames added during the write are left to the
// loop, so the caller can go on.
func (w *Writer) flushOwned(dl time.Time) error {
	more, err := w.flush(dl)
	if more {
		w.mu.Lock()
		w.kickLocked()
		w.mu.Unlock()
	}
	return err
}

// kickLocked wakes the loop. Called with mu held and flushing set: the loop
// owns the socket from now on.
func (w *Writer) kickLocked() {
	if w.done {
		w.flushing = false
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// flush writes the pending frames with one syscall, failing at dl (zero:
// never); the caller must own the socket (flushing set). It reports
// whether frames are pending again, in which case the caller still owns
// the socket; otherwise flushing is cleared.
func (w *Writer) flush(dl time.Time) (more bool, err error) {
	w.mu.Lock()
	if w.done || w.err != nil || len(w.buf) == 0 {
		w.flushing = false
		err = w.err
		w.mu.Unlock()
		return false, err
	}
	b := w.buf
	w.buf = w.spare[:0]
	w.mu.Unlock()

	if !dl.Equal(w.wdl) {
		_ = w.nc.SetWriteDeadline(dl)
		w.wdl = dl
	}
	_, err = w.nc.Write(b)

	w.mu.Lock()
	defer w.mu.Unlock()
	if cap(b) <= maxIdleWriteBuf {
		w.spare = b[:0]
	} else {
		w.spare = make([]byte, 0, 16<<10)
	}
	if err != nil {
		w.fail(err)
		return false, err
	}
	if len(w.buf) == 0 || w.done {
		w.flushing = false
		return false, nil
	}
	return true, nil
}

// fail records err and drops pending frames. Called with mu held.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.buf = w.buf[:0]
	w.flushing = false
}

// loop writes frames handed to it by write until close. It runs in its own
// goroutine for the life of the connection.
func (w *Writer) Loop() {
	for range w.kick {
		for more := true; more; {
			w.gather()
			more, _ = w.flush(time.Time{})
		}
	}
}

// gather lets the goroutines that are about to add frames do so before
// the loop writes: it yields while the pending frames keep growing, up to
// maxGather times or maxGatherBytes. A write syscall costs several
// microseconds on loopback, a yield a fraction of one. Measured at 256
// concurrent calls, this halved the client's write syscalls (about 17
// frames per write instead of 10); when frames come one at a time it
// costs one yield.
func (w *Writer) gather() {
	n := w.pending()
	for range maxGather {
		runtime.Gosched()
		m := w.pending()
		if m == n || m >= maxGatherBytes {
			return
		}
		n = m
	}
}

const (
	maxGather      = 4
	maxGatherBytes = 64 << 10
)

// pending returns the number of bytes waiting to be written.
func (w *Writer) pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.buf)
}

// close stops the loop; frames not yet written are dropped. It does not
// close the connection.
func (w *Writer) Close(err error) {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return
	}
	w.done = true
	w.fail(err)
	close(w.kick)
	w.mu.Unlock()
}

// flushed reports whether nothing is waiting to be written (for graceful
// shutdown).
func (w *Writer) Flushed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.flushing && len(w.buf) == 0
}
