package wire

import "errors"

// Sentinel errors; every error from the package's decoders wraps one of
// them, so errors.Is(err, ErrMalformed) and the like tell them apart.
var (
	// ErrBadPreface: the connection did not start with a yrpc preface
	// (an HTTP or TLS client, a port scanner, garbage).
	ErrBadPreface = errors.New("wire: bad preface")
	// ErrVersion: the peer speaks a protocol version this side does not.
	ErrVersion = errors.New("wire: unsupported protocol version")
	// ErrFrameTooLarge: a frame, or a decompressed body, exceeds the
	// reader's MaxFrameSize.
	ErrFrameTooLarge = errors.New("wire: frame too large")
	// ErrMetadataTooLarge: a metadata block exceeds the reader's
	// MaxMetadataSize.
	ErrMetadataTooLarge = errors.New("wire: metadata too large")
	// ErrMalformed: a frame, metadata block or Settings frame breaks the
	// format (bad magic, type, flags or lengths, truncated varints, a
	// corrupt lz4 block, a frame of a feature that was not negotiated).
	ErrMalformed = errors.New("wire: malformed frame")
	// ErrFlowControl: the peer sent a stream message past its credit, or
	// granted credit past MaxWindow.
	ErrFlowControl = errors.New("wire: flow control violation")
)

// FrameError describes a preface or frame that cannot be accepted. Reason
// says what is wrong with the sizes or bytes involved; Err is one of the
// package's sentinels. The zero value is not meaningful; FrameErrors are
// made by the package and are immutable.
type FrameError struct {
	Reason string
	Err    error
}

// Error returns "wire: " followed by the reason.
func (e *FrameError) Error() string { return "wire: " + e.Reason }

// Unwrap returns the sentinel, for errors.Is.
func (e *FrameError) Unwrap() error { return e.Err }
