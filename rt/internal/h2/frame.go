package h2

import (
	"bufio"
	"encoding/binary"
	"fmt"
)

// ClientPreface is what an HTTP/2 client sends before its first frame.
const ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// FrameHeaderLen is the size of a frame header.
const FrameHeaderLen = 9

// Frame sizes.
const (
	// MinMaxFrameSize is SETTINGS_MAX_FRAME_SIZE's initial value and
	// smallest allowed value: 16 KiB.
	MinMaxFrameSize = 1 << 14
	// MaxMaxFrameSize is its largest allowed value.
	MaxMaxFrameSize = 1<<24 - 1
	// MaxWindow is the largest flow-control window: 2^31-1.
	MaxWindow = 1<<31 - 1
	// InitialWindow is the initial window of streams and of the
	// connection: 65,535 bytes.
	InitialWindow = 65535
)

// FrameType is a frame's type.
type FrameType uint8

// Frame types.
const (
	FrameData         FrameType = 0x0
	FrameHeaders      FrameType = 0x1
	FramePriority     FrameType = 0x2
	FrameRSTStream    FrameType = 0x3
	FrameSettings     FrameType = 0x4
	FramePushPromise  FrameType = 0x5
	FramePing         FrameType = 0x6
	FrameGoAway       FrameType = 0x7
	FrameWindowUpdate FrameType = 0x8
	FrameContinuation FrameType = 0x9
)

var frameNames = [...]string{"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"}

func (t FrameType) String() string {
	if int(t) < len(frameNames) {
		return frameNames[t]
	}
	return fmt.Sprintf("frame type %#x", uint8(t))
}

// Flags of frames.
const (
	FlagEndStream  uint8 = 0x1 // DATA, HEADERS
	FlagAck        uint8 = 0x1 // SETTINGS, PING
	FlagEndHeaders uint8 = 0x4 // HEADERS, CONTINUATION
	FlagPadded     uint8 = 0x8 // DATA, HEADERS
	FlagPriority   uint8 = 0x20
)

// ErrCode is an error code of RST_STREAM and GOAWAY.
type ErrCode uint32

// Error codes.
const (
	ErrNo                 ErrCode = 0x0
	ErrProtocol           ErrCode = 0x1
	ErrInternal           ErrCode = 0x2
	ErrFlowControl        ErrCode = 0x3
	ErrSettingsTimeout    ErrCode = 0x4
	ErrStreamClosed       ErrCode = 0x5
	ErrFrameSize          ErrCode = 0x6
	ErrRefusedStream      ErrCode = 0x7
	ErrCancel             ErrCode = 0x8
	ErrCompression        ErrCode = 0x9
	ErrConnect            ErrCode = 0xa
	ErrEnhanceYourCalm    ErrCode = 0xb
	ErrInadequateSecurity ErrCode = 0xc
	ErrHTTP11Required     ErrCode = 0xd
)

var errNames = [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
	"FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

func (c ErrCode) String() string {
	if int(c) < len(errNames) {
		return errNames[c]
	}
	return fmt.Sprintf("error code %#x", uint32(c))
}

// ConnError is a connection error: the connection ends with a GOAWAY
// frame carrying Code (the zero value: NO_ERROR, no reason). A value that
// nothing modifies.
type ConnError struct {
	Code   ErrCode
	Reason string
}

func (e *ConnError) Error() string {
	return "h2: connection error " + e.Code.String() + ": " + e.Reason
}

// StreamError is a stream error: the stream is reset with Code (the zero
// value: stream 0, NO_ERROR). A value that nothing modifies.
type StreamError struct {
	StreamID uint32
	Code     ErrCode
	Reason   string
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("h2: stream %d error %s: %s", e.StreamID, e.Code, e.Reason)
}

func connErr(code ErrCode, format string, args ...any) *ConnError {
	return &ConnError{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// SettingID identifies a setting of a SETTINGS frame.
type SettingID uint16

// Settings.
const (
	SettingHeaderTableSize      SettingID = 0x1
	SettingEnablePush           SettingID = 0x2
	SettingMaxConcurrentStreams SettingID = 0x3
	SettingInitialWindowSize    SettingID = 0x4
	SettingMaxFrameSize         SettingID = 0x5
	SettingMaxHeaderListSize    SettingID = 0x6
)

// Setting is one setting of a SETTINGS frame; a plain value.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Check reports a setting whose value RFC 9113 forbids.
func (s Setting) Check() *ConnError {
	switch s.ID {
	case SettingEnablePush:
		if s.Val > 1 {
			return connErr(ErrProtocol, "SETTINGS_ENABLE_PUSH of %d", s.Val)
		}
	case SettingInitialWindowSize:
		if s.Val > MaxWindow {
			return connErr(ErrFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE of %d", s.Val)
		}
	case SettingMaxFrameSize:
		if s.Val < MinMaxFrameSize || s.Val > MaxMaxFrameSize {
			return connErr(ErrProtocol, "SETTINGS_MAX_FRAME_SIZE of %d", s.Val)
		}
	}
	return nil
}

// Frame is a frame read by a Reader, which fills it (the zero value is
// an empty frame). Its slices alias the Reader's buffer: they are valid
// until the next call of Next. A Frame is not safe for concurrent use.
type Frame struct {
	Type     FrameType
	Flags    uint8
	StreamID uint32
	// Length is the payload's length, padding included (what DATA
	// frames count against flow control).
	Length int
	// Data is DATA's data and HEADERS' and CONTINUATION's header block
	// fragment, without padding or priority fields; SETTINGS' settings
	// (see Settings); GOAWAY's debug data; an unknown type's payload.
	Data []byte
	// DependsOn is the stream dependency of PRIORITY frames and of
	// HEADERS frames with FlagPriority; a HEADERS frame's stream that
	// depends on itself must be reset with ErrProtocol, once its header
	// block is decoded (SelfDependent).
	DependsOn uint32
	// ErrCode of RST_STREAM and GOAWAY.
	ErrCode ErrCode
	// Increment of WINDOW_UPDATE; LastStreamID of GOAWAY.
	Increment, LastStreamID uint32
	// PingData of PING.
	PingData [8]byte
}

// SelfDependent reports whether a HEADERS frame's stream depends on
// itself (a stream error).
func (f *Frame) SelfDependent() bool { return f.Has(FlagPriority) && f.DependsOn == f.StreamID }

// Has reports whether the frame has flag f.
func (f *Frame) Has(flag uint8) bool { return f.Flags&flag != 0 }

// Settings calls fn with each setting of a SETTINGS frame, in order,
// until it returns an error.
func (f *Frame) Settings(fn func(Setting) error) error {
	for p := f.Data; len(p) >= 6; p = p[6:] {
		if err := fn(Setting{ID: SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}); err != nil {
			return err
		}
	}
	return nil
}

// Reader reads frames from a bufio.Reader whose buffer holds at least
// FrameHeaderLen plus the maximum frame size: a frame's payload is read in
// place, never copied. The zero value is not usable; use NewReader. A
// Reader is not safe for concurrent use.
type Reader struct {
	br       *bufio.Reader
	maxFrame int
	consumed int    // bytes of the last frame, discarded by the next Next
	block    uint32 // the stream whose header block is unfinished; 0: none
}

// NewReader returns a Reader of br that refuses frames larger than
// maxFrame bytes (this side's SETTINGS_MAX_FRAME_SIZE; at least
// MinMaxFrameSize). br's buffer must hold FrameHeaderLen+maxFrame bytes.
func NewReader(br *bufio.Reader, maxFrame int) *Reader {
	maxFrame = max(maxFrame, MinMaxFrameSize)
	if br.Size() < FrameHeaderLen+maxFrame {
		panic("h2: NewReader: bufio.Reader too small for the maximum frame size")
	}
	return &Reader{br: br, maxFrame: maxFrame}
}

// Preface reads the client preface.
func (r *Reader) Preface() error {
	b, err := r.br.Peek(len(ClientPreface))
	if err != nil {
		return err
	}
	if string(b) != ClientPreface {
		return fmt.Errorf("h2: %q is not the client preface", b)
	}
	_, _ = r.br.Discard(len(ClientPreface)) // buffered: cannot fail
	return nil
}

// Ready reports whether a whole frame is buffered: Next will not wait
// for the connection.
func (r *Reader) Ready() bool {
	n := r.br.Buffered() - r.consumed
	if n < FrameHeaderLen {
		return false
	}
	h, _ := r.br.Peek(r.consumed + FrameHeaderLen)
	h = h[r.consumed:]
	return n >= FrameHeaderLen+int(h[0])<<16|int(h[1])<<8|int(h[2])
}

// Buffered returns how many bytes after the last frame are buffered.
func (r *Reader) Buffered() int { return r.br.Buffered() - r.consumed }

// Next reads the next frame into f. It returns the connection's error, a
// *ConnError or a *StreamError (f then holds the frame, whose stream the
// caller resets; reading may go on).
func (r *Reader) Next(f *Frame) error {
	if r.consumed > 0 {
		_, _ = r.br.Discard(r.consumed) // buffered: cannot fail
		r.consumed = 0
	}
	h, err := r.br.Peek(FrameHeaderLen)
	if err != nil {
		return err
	}
	n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	*f = Frame{Type: FrameType(h[3]), Flags: h[4], StreamID: binary.BigEndian.Uint32(h[5:]) & (1<<31 - 1), Length: n}
	if n > r.maxFrame {
		return connErr(ErrFrameSize, "%s frame of %d bytes exceeds the maximum frame size %d", f.Type, n, r.maxFrame)
	}
	if err := r.order(f); err != nil {
		return err
	}
	b, err := r.br.Peek(FrameHeaderLen + n)
	if err != nil {
		return err
	}
	r.consumed = FrameHeaderLen + n
	return parse(f, b[FrameHeaderLen:])
}

// order checks that HEADERS and CONTINUATION frames come as RFC 9113
// section 6.10 says: a header block's frames in a row, on one stream.
func (r *Reader) order(f *Frame) error {
	if r.block != 0 && (f.Type != FrameContinuation || f.StreamID != r.block) {
		return connErr(ErrProtocol, "%s frame on stream %d inside the header block of stream %d", f.Type, f.StreamID, r.block)
	}
	switch f.Type {
	case FrameContinuation:
		if r.block == 0 {
			return connErr(ErrProtocol, "CONTINUATION frame on stream %d without a header block", f.StreamID)
		}
		fallthrough
	case FrameHeaders:
		r.block = f.StreamID
		if f.Has(FlagEndHeaders) {
			r.block = 0
		}
	}
	return nil
}

// parse checks payload p of f by f's type and fills f's fields.
func parse(f *Frame, p []byte) error {
	onStream := func() error {
		if f.StreamID == 0 {
			return connErr(ErrProtocol, "%s frame on stream 0", f.Type)
		}
		return nil
	}
	onConn := func() error {
		if f.StreamID != 0 {
			return connErr(ErrProtocol, "%s frame on stream %d, not 0", f.Type, f.StreamID)
		}
		return nil
	}
	var err error
	switch f.Type {
	case FrameData:
		if err = onStream(); err == nil {
			f.Data, err = unpad(f, p)
		}
	case FrameHeaders:
		if err = onStream(); err != nil {
			return err
		}
		if p, err = unpad(f, p); err != nil {
			return err
		}
		if f.Has(FlagPriority) {
			if len(p) < 5 {
				return connErr(ErrFrameSize, "HEADERS frame too short for its priority")
			}
			f.DependsOn = binary.BigEndian.Uint32(p) & (1<<31 - 1)
			p = p[5:]
		}
		f.Data = p // a stream depending on itself is an error the caller sees once it decoded the block
	case FrameContinuation:
		if err = onStream(); err == nil {
			f.Data = p
		}
	case FramePriority:
		if err = onStream(); err != nil {
			return err
		}
		if len(p) != 5 {
			return &StreamError{StreamID: f.StreamID, Code: ErrFrameSize, Reason: fmt.Sprintf("PRIORITY frame of %d bytes", len(p))}
		}
		if f.DependsOn = binary.BigEndian.Uint32(p) & (1<<31 - 1); f.DependsOn == f.StreamID {
			return &StreamError{StreamID: f.StreamID, Code: ErrProtocol, Reason: "stream depends on itself"}
		}
	case FrameRSTStream:
		if err = onStream(); err == nil {
			if err = fixedLen(f, p, 4); err == nil {
				f.ErrCode = ErrCode(binary.BigEndian.Uint32(p))
			}
		}
	case FrameSettings:
		if err = onConn(); err != nil {
			return err
		}
		switch {
		case f.Has(FlagAck) && len(p) != 0:
			return connErr(ErrFrameSize, "SETTINGS acknowledgement with a payload of %d bytes", len(p))
		case len(p)%6 != 0:
			return connErr(ErrFrameSize, "SETTINGS frame of %d bytes, not a multiple of 6", len(p))
		}
		f.Data = p
	case FramePushPromise:
		return connErr(ErrProtocol, "PUSH_PROMISE frame from a client")
	case FramePing:
		if err = onConn(); err == nil {
			if err = fixedLen(f, p, 8); err == nil {
				copy(f.PingData[:], p)
			}
		}
	case FrameGoAway:
		if err = onConn(); err != nil {
			return err
		}
		if len(p) < 8 {
			return connErr(ErrFrameSize, "GOAWAY frame of %d bytes", len(p))
		}
		f.LastStreamID = binary.BigEndian.Uint32(p) & (1<<31 - 1)
		f.ErrCode = ErrCode(binary.BigEndian.Uint32(p[4:]))
		f.Data = p[8:]
	case FrameWindowUpdate:
		if err = fixedLen(f, p, 4); err != nil {
			return err
		}
		f.Increment = binary.BigEndian.Uint32(p) & (1<<31 - 1)
		if f.Increment == 0 {
			if f.StreamID == 0 {
				return connErr(ErrProtocol, "WINDOW_UPDATE of 0 on the connection")
			}
			return &StreamError{StreamID: f.StreamID, Code: ErrProtocol, Reason: "WINDOW_UPDATE of 0"}
		}
	default:
		f.Data = p // unknown types are ignored
	}
	return err
}

func fixedLen(f *Frame, p []byte, n int) error {
	if len(p) != n {
		return connErr(ErrFrameSize, "%s frame of %d bytes, not %d", f.Type, len(p), n)
	}
	return nil
}

// unpad removes the padding of a DATA or HEADERS frame.
func unpad(f *Frame, p []byte) ([]byte, error) {
	if !f.Has(FlagPadded) {
		return p, nil
	}
	if len(p) == 0 {
		return nil, connErr(ErrFrameSize, "padded %s frame without a pad length", f.Type)
	}
	pad := int(p[0])
	if pad >= len(p) {
		return nil, connErr(ErrProtocol, "%s frame's padding of %d bytes fills its %d-byte payload", f.Type, pad, len(p))
	}
	return p[1 : len(p)-pad], nil
}
