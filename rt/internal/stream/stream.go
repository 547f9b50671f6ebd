package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/wire"
)

// Message is a generated message as a stream sees it (rt.Message).
type Message interface {
	Size() int
	MarshalAppend(b []byte) []byte
	Unmarshal(b []byte) error
}

// ownedUnmarshaler is rt.OwnedUnmarshaler.
type ownedUnmarshaler interface {
	UnmarshalOwned(b []byte) error
}

// Conn is what the streams of one connection share: its writer and the
// connection's flow-control windows. Make one per connection with NewConn
// once its handshake is done.
type Conn struct {
	w            *sock.Writer
	peerMaxFrame int // the largest frame the peer accepts
	streamWindow int // the peer's initial stream window: our credit per stream
	localWindow  int // ours: the peer's credit per stream

	recv wire.RecvWindow // the peer's credit; only the connection's reader (Deliver) touches it
	open atomic.Int32    // streams made by New and not yet Left

	mu     sync.Mutex
	send   wire.SendWindow // our credit on the connection
	grown  chan struct{}   // closed when send credit grows; replaced then
	failed error           // the connection's failure
}

// NewConn returns the stream state of a connection written through w:
// peer is the peer's settings, local this side's.
func NewConn(w *sock.Writer, peer, local wire.Settings) *Conn {
	return &Conn{
		w:            w,
		peerMaxFrame: peer.FrameLimit(),
		streamWindow: peer.StreamWindow(),
		localWindow:  local.StreamWindow(),
		send:         wire.NewSendWindow(peer.ConnWindow()),
		recv:         wire.NewRecvWindow(local.ConnWindow()),
		grown:        make(chan struct{}),
	}
}

// Grant adds a connection-level window update's increment (frame id 0).
func (c *Conn) Grant(inc uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.send.Grant(inc); err != nil {
		return err
	}
	close(c.grown)
	c.grown = make(chan struct{})
	return nil
}

// Fail wakes every stream waiting for the connection's credit: the
// connection is gone (err).
func (c *Conn) Fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed == nil {
		c.failed = err
		close(c.grown)
		c.grown = make(chan struct{})
	}
}

// Stream is one end of a stream: its receive queue and windows. The
// connection's reader delivers what arrives (Deliver, Grant, End); one
// goroutine sends (Send) while another receives (Recv). Frames that open,
// half-close, close or reset the stream are the caller's to write.
type Stream struct {
	c   *Conn
	id  uint32
	ctx context.Context // ends the waits of Send and Recv
	max int             // the largest message, each way; 0: the frame size

	mu      sync.Mutex
	queue   [][]byte // received message bodies, owned; queue[head:] wait, in order
	head    int
	send    wire.SendWindow
	recv    wire.RecvWindow
	sendSig chan struct{} // capacity 1: credit or the end came, for Send
	recvSig chan struct{} // capacity 1: a message or the end came, for Recv
	end     error         // what Recv returns once the queue is empty (io.EOF, or the stream's error); nil while open
	sendErr error         // why Send fails: the stream is over, or the sender closed it
	// sendOver is set with sendErr, before the caller writes the frame
	// that ends the stream's sending (a close, a reset, a half-close):
	// Send's frame, appended under the writer's lock, checks it there,
	// so that it never follows that frame.
	sendOver atomic.Bool
	run      atomic.Int32 // messages sent since the last Recv
	left     atomic.Bool  // Leave was called
}

// New returns stream id of connection c, whose waits end with ctx; its
// messages are at most maxMessage bytes each way (0: the frame size).
func New(c *Conn, id uint32, ctx context.Context, maxMessage int) *Stream {
	c.open.Add(1)
	return &Stream{c: c, id: id, ctx: ctx, max: maxMessage, send: wire.NewSendWindow(c.streamWindow), recv: wire.NewRecvWindow(c.localWindow),
		sendSig: make(chan struct{}, 1), recvSig: make(chan struct{}, 1)}
}

// Leave tells the connection that the stream no longer counts among its
// open ones (its owner forgot it); later calls do nothing.
func (s *Stream) Leave() {
	if !s.left.Swap(true) {
		s.c.open.Add(-1)
	}
}

// ErrTooLarge marks a message over the stream's MaxMessageSize.
var ErrTooLarge = errors.New("stream: message too large")

// ID returns the stream's id.
func (s *Stream) ID() uint32 { return s.id }

// wake signals ch, a waiter's channel of capacity 1.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ErrCanceled is what Send and Recv return when the stream's context ends
// first; the caller turns it into the context's error.
var ErrCanceled = errors.New("stream: context done")

// Send sends m as the next message, waiting for credit on the stream and
// on the connection. It returns the stream's send error once it is over
// (End, StopSending: also when that came while Send was under way; the
// message is then not sent), or ErrCanceled once the stream's context
// ended (with credit or not), or the writer's error.
func (s *Stream) Send(m Message) error {
	size := m.Size()
	if s.max > 0 && size > s.max {
		return fmt.Errorf("%w: %d bytes, the method's limit is %d", ErrTooLarge, size, s.max)
	}
	h := wire.Header{Type: wire.TypeStreamMessage, ID: s.id}
	fs := wire.FrameSize(&h, nil, size)
	if fs > s.c.peerMaxFrame {
		return fmt.Errorf("%w: a frame of %d bytes, the peer's max frame size is %d", ErrTooLarge, fs, s.c.peerMaxFrame)
	}
	cost := wire.MessageCost(size)
	for {
		s.mu.Lock()
		if err := s.sendErr; err != nil {
			s.mu.Unlock()
			return err
		}
		streamOpen := s.send.Open()
		s.mu.Unlock()
		if s.ctx.Err() != nil {
			// Past the deadline, or canceled, while no one has ended the
			// stream yet: the peer gave up on it, so the message would be
			// lost while the sender believed it sent. (Or ended since the
			// check above, canceling the context after: say so.)
			return s.sendEnded(ErrCanceled)
		}
		c := s.c
		c.mu.Lock()
		if err := c.failed; err != nil {
			c.mu.Unlock()
			return err
		}
		connOpen, grown := c.send.Open(), c.grown
		if streamOpen && connOpen {
			c.send.Spend(cost)
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		select {
		case <-s.sendSig:
		case <-grown:
		case <-s.ctx.Done():
			return s.sendEnded(ErrCanceled)
		}
	}
	s.mu.Lock()
	s.send.Spend(cost)
	s.mu.Unlock()
	// A message answering one just received (an echo, a request and its
	// response) on a stream alone on its connection goes out at once on
	// this goroutine. A run of messages (a feed, an upload), or messages
	// of streams that share the connection, are handed to the writer,
	// which batches them: at 64 echo streams on one connection that
	// nearly halved the CPU per round trip (BenchmarkBidiEcho).
	mode := sock.Queued
	if s.run.Add(1) == 1 && s.c.open.Load() <= 1 {
		mode = sock.Direct
	}
	sent := false
	err := s.c.w.WriteSized(fs, func(b []byte) []byte {
		if s.sendOver.Load() {
			return b // the frame that ended the stream may be out already
		}
		sent = true
		return m.MarshalAppend(wire.AppendHeader(b, &h, nil, size))
	}, mode)
	if err == nil && !sent {
		s.c.refund(cost)
		return s.sendEnded(nil)
	}
	return err
}

// sendEnded returns the stream's send error when it has one, else err.
func (s *Stream) sendEnded(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendErr != nil {
		return s.sendErr
	}
	return err
}

// refund gives back the connection credit of a message that Send did
// not send after all.
func (c *Conn) refund(cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.send.Spend(-cost)
	close(c.grown)
	c.grown = make(chan struct{})
}

// Recv receives the next message into m: it waits for one, and returns
// the stream's end (io.EOF, or its error) once the queue is empty and the
// peer sends no more, or ErrCanceled.
func (s *Stream) Recv(m Message) error {
	s.run.Store(0)
	for {
		s.mu.Lock()
		if s.head < len(s.queue) {
			body := s.queue[s.head]
			s.queue[s.head] = nil
			if s.head++; s.head == len(s.queue) {
				s.queue, s.head = s.queue[:0], 0 // emptied: the next messages reuse the array
			}
			inc := s.recv.Consume(wire.MessageCost(len(body)))
			s.mu.Unlock()
			if inc > 0 {
				s.writeUpdate(inc)
			}
			if u, ok := m.(ownedUnmarshaler); ok {
				return u.UnmarshalOwned(body)
			}
			return m.Unmarshal(body)
		}
		if err := s.end; err != nil {
			s.mu.Unlock()
			return err
		}
		s.mu.Unlock()
		select {
		case <-s.recvSig:
		case <-s.ctx.Done():
			return ErrCanceled
		}
	}
}

// writeUpdate grants the peer inc more bytes on the stream.
func (s *Stream) writeUpdate(inc uint32) {
	_ = s.c.w.Write(func(b []byte) []byte { return wire.AppendWindowUpdate(b, s.id, inc) }, sock.Queued)
}

// Deliver queues a message the reader took off the connection (its body
// is copied), and grants its cost back on the connection at once. It
// returns an error, after which the caller resets the stream (or, for
// the connection's window, closes the connection), when the peer broke
// flow control; a message for a stream whose receiving side is over is
// dropped. Only the connection's reading goroutine may call it.
func (s *Stream) Deliver(body []byte) error {
	cost := wire.MessageCost(len(body))
	if err := s.c.take(cost); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end != nil {
		return nil // the receiving side is over: drop it
	}
	if err := s.recv.Receive(cost); err != nil {
		return err
	}
	if s.max > 0 && len(body) > s.max {
		return fmt.Errorf("%w: %d bytes from the peer, the method's limit is %d", ErrTooLarge, len(body), s.max)
	}
	if len(s.queue) == cap(s.queue) && s.head > 0 {
		// Full with room before head (a reader that lags): move the
		// waiting ones to the front rather than grow.
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	own := make([]byte, len(body))
	copy(own, body)
	s.queue = append(s.queue, own)
	wake(s.recvSig)
	return nil
}

// Drop takes a message off the connection that no open stream of it
// gets (one sent before the sender learned that its stream ended: the
// stream is forgotten here), granting its cost back on the connection as
// Deliver does: the sender spent its credit on it. It returns an error,
// after which the caller closes the connection, when the peer broke the
// connection's flow control. Only the connection's reading goroutine may
// call it.
func (c *Conn) Drop(body []byte) error {
	return c.take(wire.MessageCost(len(body)))
}

// take counts a message of cost bytes against the connection's window
// and grants it back (Deliver, Drop).
func (c *Conn) take(cost int) error {
	if err := c.recv.Receive(cost); err != nil {
		return &connError{err}
	}
	if inc := c.recv.Consume(cost); inc > 0 {
		_ = c.w.Write(func(b []byte) []byte { return wire.AppendWindowUpdate(b, 0, inc) }, sock.Queued)
	}
	return nil
}

// connError marks a flow-control breach on the connection's window.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// IsConnError reports whether err from Deliver concerns the whole
// connection (close it), not the one stream (reset it).
func IsConnError(err error) bool {
	var ce *connError
	return errors.As(err, &ce)
}

// Grant adds a window update's increment to the stream's credit.
func (s *Stream) Grant(inc uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.send.Grant(inc); err != nil {
		return err
	}
	wake(s.sendSig)
	return nil
}

// RemoteDone records that the peer sends no more messages (it
// half-closed, or closed the stream with status OK): Recv returns io.EOF
// once the queue is empty.
func (s *Stream) RemoteDone() { s.End(io.EOF, nil) }

// End ends the stream: Recv returns recvErr once the queue is empty (the
// first End wins), and Send returns sendErr from now on when not nil.
// Both waits wake.
func (s *Stream) End(recvErr, sendErr error) {
	s.mu.Lock()
	if s.end == nil {
		s.end = recvErr
	}
	if sendErr != nil && s.sendErr == nil {
		s.sendErr = sendErr
		s.sendOver.Store(true)
	}
	s.mu.Unlock()
	wake(s.recvSig)
	wake(s.sendSig)
}

// StopSending makes Send fail with err (the local side closed or reset
// the stream) without ending Recv.
func (s *Stream) StopSending(err error) {
	s.mu.Lock()
	if s.sendErr == nil {
		s.sendErr = err
		s.sendOver.Store(true)
	}
	s.mu.Unlock()
	wake(s.sendSig)
}

// Buffered returns the bytes received and not yet read (for tests and
// metrics).
func (s *Stream) Buffered() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recv.Buffered()
}
