package rt

import (
	"net"
	"runtime"
	"sync"
)

// connWriter batches frames onto one connection. A goroutine that appends a
// frame while nobody is writing writes it itself, with no hand-off (the
// common case at low load). Frames appended while a write is in progress
// wait in a buffer that the background loop flushes with one syscall, so
// under load many frames share each write.
type connWriter struct {
	nc   net.Conn
	kick chan struct{} // wakes loop; capacity 1

	mu       sync.Mutex
	buf      []byte // frames waiting to be written
	spare    []byte // the other buffer, reused
	flushing bool   // a goroutine owns the socket for writing
	err      error  // sticky write error
	done     bool
}

const maxIdleWriteBuf = 1 << 20 // larger buffers are dropped after use

func newConnWriter(nc net.Conn) *connWriter {
	return &connWriter{nc: nc, kick: make(chan struct{}, 1), buf: make([]byte, 0, 16<<10), spare: make([]byte, 0, 16<<10)}
}

// write appends one frame with fn and makes sure it gets written. fn must
// append the whole frame to its argument and return the result; it runs
// under the writer's lock, so it must be quick and must not call back.
//
// With direct set (the connection has no other call in flight) and nobody
// writing, the caller writes the frame itself: no hand-off, the lowest
// latency. Otherwise the frame waits for the writer loop, which lets other
// goroutines add theirs before it writes them all with one syscall.
func (w *connWriter) write(fn func([]byte) []byte, direct bool) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.buf = fn(w.buf)
	if w.flushing {
		w.mu.Unlock()
		return nil
	}
	w.flushing = true
	if !direct {
		w.kickLocked()
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	more, err := w.flush()
	if more {
		// Frames arrived during the write: the loop batches them, so this
		// caller can go on with its own call.
		w.mu.Lock()
		w.kickLocked()
		w.mu.Unlock()
	}
	return err
}

// kickLocked wakes the loop. Called with mu held and flushing set: the loop
// owns the socket from now on.
func (w *connWriter) kickLocked() {
	if w.done {
		w.flushing = false
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// flush writes the pending frames with one syscall; the caller must own the
// socket (flushing set). It reports whether frames are pending again, in
// which case the caller still owns the socket; otherwise flushing is
// cleared.
func (w *connWriter) flush() (more bool, err error) {
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
func (w *connWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.buf = w.buf[:0]
	w.flushing = false
}

// loop writes frames handed to it by write until close. It runs in its own
// goroutine for the life of the connection.
func (w *connWriter) loop() {
	for range w.kick {
		// Let the goroutines that are about to add frames do so first:
		// measured, this batches more frames per syscall under load.
		runtime.Gosched()
		for more := true; more; {
			more, _ = w.flush()
		}
	}
}

// close stops the loop; frames not yet written are dropped. It does not
// close the connection.
func (w *connWriter) close(err error) {
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
func (w *connWriter) flushed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.flushing && len(w.buf) == 0
}
