package sock

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Writer batches frames onto one connection. A goroutine that appends a
// frame while nobody is writing writes it itself, with no hand-off (the
// common case at low load). Frames appended while a write is in progress
// wait in buffers that the background loop flushes with one syscall
// (writev), so under load many frames share each write.
//
// The waiting frames fill a list of chunks, fixed-size buffers from the
// side's BufferPool, rather than one buffer grown by copying: a backlog
// of a megabyte (a peer that reads slower than the streams write) costs
// chunk after chunk, never a copy of what is already queued. Chunks go
// back to the pool once written, so an idle connection holds none.
// Buffered tells how many bytes wait (or are being written), so that a
// reader can stop reading a peer that does not take its answers
// (WaitBelow).
type Writer struct {
	nc      net.Conn
	kick    chan struct{} // wakes loop; capacity 1
	pool    *BufferPool
	timeout time.Duration // a write that makes no progress for this long fails; 0: never

	mu       sync.Mutex
	pending  []chunk     // frames waiting to be written, in order; the last chunk takes the next frame
	writing  []chunk     // the chunks of the write in progress; only the flusher touches them
	vec      net.Buffers // writeAll's scratch for writev, kept for reuse
	flushing bool        // a goroutine owns the socket for writing
	err      error       // sticky write error
	done     bool
	waiting  bool          // a WaitBelow is parked on drain
	looping  bool          // the loop goroutine runs
	drain    chan struct{} // capacity 1: a write completed (for WaitBelow)

	queued atomic.Int64 // bytes in buf plus the write in progress

	wdl time.Time // the socket's write deadline; only its owner touches it
}

// WriterOptions configure a Writer. The zero value: private buffers, no
// write timeout.
type WriterOptions struct {
	// Pool lends the buffers; nil gives the Writer a pool of its own.
	Pool *BufferPool
	// Timeout fails the connection when a write makes no progress for
	// this long (at least half of it, at most all of it: the deadline is
	// renewed lazily); 0 means never.
	Timeout time.Duration
}

// NewWriter returns a Writer of nc. Its background goroutine runs only
// while it has frames to batch.
func NewWriter(nc net.Conn, o WriterOptions) *Writer {
	if o.Pool == nil {
		o.Pool = new(BufferPool)
	}
	return &Writer{nc: nc, kick: make(chan struct{}, 1), drain: make(chan struct{}, 1), pool: o.Pool, timeout: o.Timeout}
}

// BufferPool lends write buffers to the Writers of one side: chunks of
// 16 KiB, and larger buffers for single large frames. The zero value is
// ready to use; it is safe for concurrent use.
type BufferPool struct {
	chunks sync.Pool // *[]byte of capacity chunkSize
	large  sync.Pool // *[]byte of capacity over chunkSize, up to maxPooledBuf
}

const (
	chunkSize    = 16 << 10
	minChunkFree = 1 << 10 // a frame of unknown size starts a new chunk when less is free
	maxPooledBuf = 8 << 20 // larger buffers are dropped after use: twice the default max frame size (4 MiB), so that a frame of any size it allows is kept, header and all
)

// chunk is a buffer of waiting frames and the pool's handle of it, which
// travels with it so that lending costs no allocation.
type chunk struct {
	b []byte
	h *[]byte
}

// get returns an empty chunk of at least size bytes (chunkSize when
// less).
func (p *BufferPool) get(size int) chunk {
	pool := &p.chunks
	if size > chunkSize {
		pool = &p.large
	}
	if bp, ok := pool.Get().(*[]byte); ok && cap(*bp) >= size {
		return chunk{(*bp)[:0], bp}
	}
	b := make([]byte, 0, max(size, chunkSize)) // a large buffer too small is dropped
	return chunk{b, &b}
}

// put gives back c (its buffer may have grown since get).
func (p *BufferPool) put(c chunk) {
	n := cap(c.b)
	if n > maxPooledBuf {
		return
	}
	*c.h = c.b[:0]
	if n == chunkSize {
		p.chunks.Put(c.h)
	} else {
		p.large.Put(c.h)
	}
}

// WriteMode says when a frame handed to Writer.Write goes out.
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
	// and promises to call FlushHeld, so that a batch of frames goes out
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

// Write appends one frame with fn and makes sure it gets written as mode
// says. fn must append the whole frame to its argument and return the
// result; it runs under the writer's lock, so it must be quick and must
// not call back. A frame that may be larger than a kilobyte should be
// written with WriteSized.
func (w *Writer) Write(fn func([]byte) []byte, mode WriteMode) error {
	return w.WriteBefore(0, fn, mode, time.Time{})
}

// WriteSized is Write for a frame of size bytes (at most: it is the room
// fn finds, so that the frame is never grown into place by copying).
func (w *Writer) WriteSized(size int, fn func([]byte) []byte, mode WriteMode) error {
	return w.WriteBefore(size, fn, mode, time.Time{})
}

// WriteBefore is WriteSized (size 0: unknown, a small frame) for a caller
// with a deadline (zero: none): if the caller ends up writing itself, the
// write fails once dl passes, and the connection with it, so that a peer
// that stops reading cannot hold the caller past its deadline. The frames
// of others queued behind a stalled write are lost with the connection,
// as they would be when it breaks.
func (w *Writer) WriteBefore(size int, fn func([]byte) []byte, mode WriteMode, dl time.Time) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	tail := w.room(size)
	n := len(tail.b)
	tail.b = fn(tail.b)
	queued := w.queued.Add(int64(len(tail.b) - n))
	if w.flushing || mode == Held && queued < maxHeldBytes {
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

// room returns the chunk the next frame goes into: the last pending one
// if it has size bytes free (minChunkFree when size is 0), else a new one.
// Called with mu held.
func (w *Writer) room(size int) *chunk {
	if k := len(w.pending); k > 0 {
		t := &w.pending[k-1]
		if cap(t.b)-len(t.b) >= max(size, minChunkFree) {
			return t
		}
	}
	w.pending = append(w.pending, w.pool.get(size))
	return &w.pending[len(w.pending)-1]
}

// FlushHeld writes the frames appended with Held, on the calling
// goroutine, unless another goroutine is writing already (it writes them
// too).
func (w *Writer) FlushHeld() error {
	w.mu.Lock()
	if w.flushing || w.err != nil || len(w.pending) == 0 {
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
	if !w.looping {
		w.looping = true
		go w.loop()
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
	if w.done || w.err != nil || len(w.pending) == 0 {
		w.flushing = false
		err = w.err
		w.mu.Unlock()
		return false, err
	}
	w.pending, w.writing = w.writing, w.pending
	w.mu.Unlock()

	n, err := w.writeAll(dl)
	for i := range w.writing {
		w.pool.put(w.writing[i])
		w.writing[i] = chunk{}
	}
	w.writing = w.writing[:0]

	w.mu.Lock()
	defer w.mu.Unlock()
	w.queued.Add(-int64(n))
	if w.waiting {
		w.waiting = false
		w.drain <- struct{}{} // capacity 1, and only one waiter is parked
	}
	if err != nil {
		w.fail(err)
		return false, err
	}
	if len(w.pending) == 0 || w.done {
		w.flushing = false
		return false, nil
	}
	return true, nil
}

// writeAll writes the chunks of w.writing, one buffer with write and more
// with writev, failing once dl passes (zero: never) or, with a timeout,
// once a write makes no progress for the timeout. It returns the bytes
// the chunks held.
func (w *Writer) writeAll(dl time.Time) (int, error) {
	if len(w.writing) == 1 {
		b := w.writing[0].b
		for {
			w.setDeadline(dl)
			n, err := w.nc.Write(b)
			b = b[n:]
			if err == nil || !w.goOn(err, n, len(b), dl) {
				return len(w.writing[0].b), err
			}
		}
	}
	total := 0
	for _, c := range w.writing {
		w.vec = append(w.vec, c.b)
		total += len(c.b)
	}
	defer func() { clear(w.vec[:cap(w.vec)]); w.vec = w.vec[:0] }()
	left := total
	for {
		w.setDeadline(dl)
		v := w.vec // WriteTo consumes its receiver; w.vec keeps the array for reuse
		n, err := v.WriteTo(w.nc)
		left -= int(n)
		if err == nil || !w.goOn(err, int(n), left, dl) {
			return total, err
		}
		w.vec = append(w.vec[:0], v...)
	}
}

// goOn reports whether a write that wrote n bytes and failed with err,
// left bytes short of the end, should go on: a deadline of the timeout's
// that passed with progress made (the peer reads, slowly) goes on under
// a new one, unless dl has passed.
func (w *Writer) goOn(err error, n, left int, dl time.Time) bool {
	return n > 0 && left > 0 && errors.Is(err, os.ErrDeadlineExceeded) && (dl.IsZero() || time.Now().Before(dl))
}

// setDeadline sets the socket's write deadline for a write that must end
// by dl (zero: none): dl, or sooner the timeout from now. With a timeout
// the deadline is renewed only once less than half of it is left, so that
// writes under load do not pay for a deadline each.
func (w *Writer) setDeadline(dl time.Time) {
	target := dl
	if w.timeout > 0 {
		now := time.Now()
		lim := now.Add(w.timeout)
		if dl.IsZero() || lim.Before(dl) {
			if !w.wdl.IsZero() && !w.wdl.After(lim) && w.wdl.Sub(now) >= w.timeout/2 {
				return // the deadline in force is fine
			}
			target = lim
		}
	}
	if !target.Equal(w.wdl) {
		_ = w.nc.SetWriteDeadline(target)
		w.wdl = target
	}
}

// fail records err and drops pending frames. Called with mu held.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	for i, c := range w.pending {
		w.queued.Add(-int64(len(c.b)))
		w.pool.put(c)
		w.pending[i] = chunk{}
	}
	w.pending = w.pending[:0]
	w.flushing = false
	if w.waiting {
		w.waiting = false
		w.drain <- struct{}{}
	}
}

// loopIdle is how long the writer's goroutine waits for more work before
// it ends; the next frame handed to the writer starts a new one. An idle
// connection thus costs no goroutine for writing.
const loopIdle = 5 * time.Second

// loop writes frames handed to it by Write until Close, or until it has
// had nothing to do for loopIdle. kickLocked starts it.
func (w *Writer) loop() {
	idle := time.NewTimer(loopIdle)
	defer idle.Stop()
	for {
		select {
		case _, ok := <-w.kick:
			if !ok {
				return
			}
			for more := true; more; {
				w.gather()
				more, _ = w.flush(time.Time{})
			}
			idle.Reset(loopIdle)
		case <-idle.C:
			w.mu.Lock()
			if len(w.kick) == 0 {
				w.looping = false
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			idle.Reset(loopIdle)
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
	n := w.Buffered()
	for range maxGather {
		runtime.Gosched()
		m := w.Buffered()
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

// Buffered returns the bytes waiting to be written or being written.
func (w *Writer) Buffered() int { return int(w.queued.Load()) }

// WaitBelow waits until at most limit bytes are buffered, and returns the
// writer's error if it failed or closed meanwhile. One goroutine at a
// time may wait (the connection's reader, pausing a peer that does not
// read its answers).
func (w *Writer) WaitBelow(limit int) error {
	w.mu.Lock()
	for w.err == nil && !w.done && w.Buffered() > limit {
		w.waiting = true
		w.mu.Unlock()
		<-w.drain
		w.mu.Lock()
	}
	err := w.err
	w.mu.Unlock()
	return err
}

// Close stops the loop; frames not yet written are dropped. It does not
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

// Flushed reports whether nothing is waiting to be written (for graceful
// shutdown).
func (w *Writer) Flushed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.flushing && len(w.pending) == 0
}
