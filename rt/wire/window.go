package wire

import "fmt"

// Flow control constants.
const (
	// MaxWindow is the largest credit a window may hold: 2^31-1 bytes.
	MaxWindow = 1<<31 - 1
	// DefaultStreamWindow is a stream's initial credit when the receiver
	// announces none: 64 KiB.
	DefaultStreamWindow = 64 << 10
	// DefaultConnectionWindow is the connection's initial credit for
	// stream messages when the receiver announces none: 1 MiB.
	DefaultConnectionWindow = 1 << 20
)

// MessageCost returns what a stream message whose body is bodyLen bytes
// long (decompressed) costs in flow-control credit: HeaderLen + bodyLen,
// so that empty messages are not free. Both sides compute it from the
// uncompressed body: the sender before compressing, the receiver after
// decompressing.
func MessageCost(bodyLen int) int { return HeaderLen + max(bodyLen, 0) }

// SendWindow is a sender's credit on one stream or on the connection: how
// many bytes of messages it may still send before the peer grants more.
// A message may be sent while the credit is positive, and its whole cost
// is then spent, so the credit may go negative by less than one message:
// a message larger than the window is never stuck. Send on a stream only
// when both its window and the connection's allow it.
//
// The zero value has no credit; make one with NewSendWindow. A SendWindow
// is not safe for concurrent use: guard it with the lock that orders the
// stream's or the connection's frames.
type SendWindow struct {
	credit int64
}

// NewSendWindow returns a window with the peer's initial credit (its
// Settings' StreamWindow or ConnWindow).
func NewSendWindow(initial int) SendWindow { return SendWindow{credit: int64(initial)} }

// Credit returns the bytes that may still be sent; it is negative after a
// message larger than the credit.
func (w *SendWindow) Credit() int64 { return w.credit }

// Open reports whether a message may be sent now: the credit is positive.
func (w *SendWindow) Open() bool { return w.credit > 0 }

// Spend takes the cost of a sent message (MessageCost) from the credit.
func (w *SendWindow) Spend(cost int) { w.credit -= int64(cost) }

// Grant adds a window update's increment to the credit. It returns a
// *FrameError wrapping ErrFlowControl, and leaves the credit alone, when
// the increment is 0 or would take the credit above MaxWindow: a peer
// that grants more than it announced is broken.
func (w *SendWindow) Grant(increment uint32) error {
	if increment == 0 || w.credit+int64(increment) > MaxWindow {
		return &FrameError{
			Reason: fmt.Sprintf("window update of %d on a credit of %d exceeds the maximum window %d", increment, w.credit, MaxWindow),
			Err:    ErrFlowControl,
		}
	}
	w.credit += int64(increment)
	return nil
}

// RecvWindow is a receiver's account of the credit it gave the peer on
// one stream or on the connection. Receive counts what arrives and
// refuses a message the peer had no credit for; Consume counts what the
// receiver is done with and says when to send a window update, batching
// the increments so that an update goes out for every quarter of the
// window rather than for every message.
//
// For a stream, Consume when the application has read the message, so
// that a slow reader stops its own stream only. For the connection,
// Consume as soon as the message is taken off the connection (queued to
// its stream or dropped), so that one stalled stream never stops the
// others; the stream windows then bound what the receiver holds.
//
// The zero value is a window of size 0; make one with NewRecvWindow. A
// RecvWindow is not safe for concurrent use.
type RecvWindow struct {
	size     int64 // the window announced
	credit   int64 // what the peer may still send, as counted here
	consumed int64 // done with but not yet granted back
}

// NewRecvWindow returns the account of a window of size bytes (this
// side's Settings' StreamWindow or ConnWindow), all of it given to the
// peer.
func NewRecvWindow(size int) RecvWindow {
	return RecvWindow{size: int64(size), credit: int64(size)}
}

// Credit returns what the peer may still send, as counted here.
func (w *RecvWindow) Credit() int64 { return w.credit }

// Buffered returns the bytes received and not yet consumed.
func (w *RecvWindow) Buffered() int64 { return w.size - w.credit - w.consumed }

// Receive counts a message of cost bytes (MessageCost). It returns a
// *FrameError wrapping ErrFlowControl, and counts nothing, when the peer
// had no credit left, that is when it sent past the window.
func (w *RecvWindow) Receive(cost int) error {
	if w.credit <= 0 {
		return &FrameError{
			Reason: fmt.Sprintf("peer sent a message of %d bytes with a credit of %d (window %d)", cost, w.credit, w.size),
			Err:    ErrFlowControl,
		}
	}
	w.credit -= int64(cost)
	return nil
}

// Consume counts cost bytes the receiver is done with (at most what is
// Buffered; more counts as Buffered) and returns the increment to send in
// a window update now, or 0 to wait. It grants back what was consumed once
// that is at least a quarter of the window, or at once when the peer has
// run out of credit, but never while the grant would leave the peer's
// credit at 0 or below (after a message larger than the window), since
// such an update would not let it send.
func (w *RecvWindow) Consume(cost int) uint32 {
	w.consumed += min(int64(max(cost, 0)), w.Buffered())
	if w.consumed == 0 || w.credit+w.consumed <= 0 || w.credit > 0 && w.consumed < max(w.size/4, 1) {
		return 0
	}
	return w.Flush()
}

// Flush returns the increment that grants back everything consumed and
// not yet granted (0 if nothing; at most MaxWindow at a time), for a
// receiver that sends an update now anyway, e.g. with other frames.
func (w *RecvWindow) Flush() uint32 {
	inc := min(w.consumed, MaxWindow)
	w.credit += inc
	w.consumed -= inc
	return uint32(inc)
}
