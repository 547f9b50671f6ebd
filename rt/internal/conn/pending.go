package conn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/yrpc/yrpc/rt/wire"
)

// Message is a generated message as the connection sees it (rt.Message).
type Message interface {
	Size() int
	MarshalAppend(b []byte) []byte
	Unmarshal(b []byte) error
}

// OwnedUnmarshaler is rt.OwnedUnmarshaler: a message that may keep the
// bytes it decodes, so the reader hands a response's bytes to its caller
// and the caller decodes them on its own goroutine.
type OwnedUnmarshaler interface {
	UnmarshalOwned(b []byte) error
}

// NewResponse returns a new, empty response message that implements
// OwnedUnmarshaler, and room for n bytes allocated with it (rt.MethodDesc's
// NewResponseWithRoom).
type NewResponse func(n int) (Message, []byte)

// Request is one call as the connection sends it. The caller fills it and
// must not change it while Conn.Call runs.
type Request struct {
	Method   uint32    // wire ID
	Name     string    // "pkg.Service/Method", for errors
	Oneway   bool      // no response is awaited
	Deadline time.Time // zero: none
	Req      Message
	// Resp is the message the response is decoded into. Nil for oneway
	// calls, and for calls that have the connection make it with NewResp
	// once the response's size is known (Pending.Response returns it).
	Resp    Message
	NewResp NewResponse
	MD      []string
	// WantMD makes Call keep the response's metadata in Pending.MD.
	WantMD bool
	// MaxMessage bounds each message of a stream, both ways; 0: the
	// frame size.
	MaxMessage int
}

// Pending is the record of one call in flight: the connection's reader
// hands the answer over through it. Its owner reuses it call after call
// (it keeps the request frame's buffer and a timer) and must not touch it
// while Conn.Call runs. The zero value is not usable; see NewPending.
type Pending struct {
	done    chan struct{} // one value per call the reader took out of pending
	resp    Message
	newResp NewResponse // makes resp when the call has none (Request.NewResp)
	err     error
	raw     []byte // the response's body for the caller to decode (see result)
	// body is the reader's copy of a response of up to maxBodyCopy bytes
	// for a call that makes its response (newResp), kept across calls:
	// the caller makes the message with room for it (see result), so
	// that the reader, which serves every call of the connection, does
	// not allocate.
	body  []byte
	addr  string // of the connection that answered, for decode errors
	frame []byte // scratch for the request frame, kept across calls
	timer *time.Timer
	want  bool
	// watched: the connection answers the call when its context ends
	// (see ctxWatch), with an error naming the call; guarded by Conn.mu.
	watched bool
	name    string
	// MD is the response's metadata after a call whose Request asked for
	// it (WantMD), else nil.
	MD []string
}

// NewPending returns a record ready for Conn.Call.
func NewPending() *Pending { return &Pending{done: make(chan struct{}, 1)} }

// Reset drops the references the record holds to the last call's
// messages and metadata, before it is pooled.
func (p *Pending) Reset() { p.resp, p.newResp, p.raw, p.MD, p.err = nil, nil, nil, nil, nil }

// Response is the message the last call decoded its response into: its
// Request's Resp, or the one NewResp made. Valid once Call returned nil,
// until Reset.
func (p *Pending) Response() Message { return p.resp }

// SetResponse records m as the response of a call whose transport decodes
// it itself (see DecodeNew).
func (p *Pending) SetResponse(m Message) { p.resp = m }

// DecodeNew decodes body, which it does not keep, into a message that
// newResp makes with room for a copy of body: the message and the bytes
// its strings share cost one allocation.
func DecodeNew(newResp NewResponse, body []byte) (Message, error) {
	m, room := newResp(len(body))
	copy(room, body)
	return m, m.(OwnedUnmarshaler).UnmarshalOwned(room)
}

// maxFrameScratch bounds the request frame buffer a Pending keeps for its
// next call.
const maxFrameScratch = 64 << 10

// maxBodyCopy bounds the responses that the reader copies into
// Pending.body (rt.WithRoom's ladder ends at 4 KiB).
const maxBodyCopy = 4 << 10

// result is the outcome of a call whose done channel fired: its error, or
// the error of decoding the response the reader handed over.
func (p *Pending) result() error {
	if p.raw == nil {
		return p.err
	}
	raw := p.raw
	p.raw = nil
	var err error
	if p.resp == nil { // raw is p.body: make the message, with room for it
		p.resp, err = DecodeNew(p.newResp, raw)
	} else {
		err = p.resp.(OwnedUnmarshaler).UnmarshalOwned(raw)
	}
	if err != nil {
		return decodeError(p.addr, err)
	}
	return nil
}

// decode turns a response frame into p's result; the reader calls it.
func (p *Pending) decode(f *wire.Frame, addr string) error {
	var md []string
	if len(f.Metadata) > 0 && (p.want || f.Status != 0) {
		kv, err := wire.ParseMetadata(f.Metadata, nil)
		if err != nil {
			return errorf(Internal, "response from %s: bad metadata: %v", addr, err)
		}
		md = kv
		if p.want {
			p.MD = md
		}
	}
	if f.Status != 0 {
		e := &Error{Code: f.Status, Message: string(f.Body), Remote: true}
		if refused(md) {
			return &NotSent{Err: e}
		}
		return e
	}
	if p.resp == nil {
		// The caller makes its response and decodes (result): the
		// reader, which serves every call of the connection, only
		// copies, into the record's buffer up to maxBodyCopy bytes.
		if n := len(f.Body); n <= maxBodyCopy {
			if p.body == nil {
				p.body = make([]byte, 0, min(max(n, 512), maxBodyCopy))
			}
			p.body = append(p.body[:0], f.Body...)
			p.raw = p.body
		} else {
			var room []byte
			p.resp, room = p.newResp(n)
			p.raw = room[:copy(room, f.Body)]
		}
		p.addr = addr
		return nil
	}
	if _, ok := p.resp.(OwnedUnmarshaler); ok {
		p.raw = make([]byte, len(f.Body))
		copy(p.raw, f.Body)
		p.addr = addr
		return nil
	}
	if err := p.resp.Unmarshal(f.Body); err != nil {
		return decodeError(addr, err)
	}
	return nil
}

// MDRefused marks responses to calls that never reached a handler, so that
// clients know a retry cannot execute the call twice.
const MDRefused = "yrpc-refused"

func refused(md []string) bool {
	for i := 0; i+1 < len(md); i += 2 {
		if md[i] == MDRefused {
			return md[i+1] != ""
		}
	}
	return false
}

// Status codes the connection reports, with gRPC's numbers (rt.Code).
const (
	Canceled           uint8 = 1
	InvalidArgument    uint8 = 3
	DeadlineExceeded   uint8 = 4
	ResourceExhausted  uint8 = 8
	FailedPrecondition uint8 = 9
	Unimplemented      uint8 = 12
	Internal           uint8 = 13
	Unavailable        uint8 = 14
)

// Error is a failed call or connection as the connection sees it. Package
// rt turns it into an *rt.Error with the same fields.
type Error struct {
	Code    uint8 // an rt.Code
	Message string
	Remote  bool // the server answered with this error
	Cause   error
	// Details are the error's structured details (rt.Error.Details), as
	// gRPC servers send them; yrpc's wire carries none.
	Details []Detail
}

// Detail is one structured detail of an error: a google.protobuf.Any.
type Detail struct {
	TypeURL string
	Value   []byte
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Cause }

func errorf(code uint8, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotSent marks failures that happened before the request left this
// process, or that the server refused before running the call: retrying
// them cannot execute the call twice.
type NotSent struct {
	Err error
	// Lost: the request did not leave because the connection was lost
	// (it had failed, or failed writing it): the provider itself may
	// take it on a new connection.
	Lost bool
}

func (e *NotSent) Error() string { return e.Err.Error() }
func (e *NotSent) Unwrap() error { return e.Err }

// ctxError turns a context's error into an *Error naming what waited.
func ctxError(err error, what string) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: DeadlineExceeded, Message: what + ": deadline exceeded", Cause: err}
	}
	return &Error{Code: Canceled, Message: what + ": canceled", Cause: err}
}

func decodeError(addr string, err error) error {
	return &Error{Code: Internal, Message: fmt.Sprintf("decode response from %s: %v", addr, err), Cause: err}
}
