package wire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Peer is what a handshake learned about the other side. It is plain data,
// safe to copy and to share read-only; the zero value is a peer that
// announced nothing.
type Peer struct {
	// Preface is the peer's preface as it was sent.
	Preface Preface
	// Features are the features both sides announced: use a feature only
	// if it is here, and pass them to ReaderOptions.Features.
	Features Features
	// Settings are the peer's settings: from its Settings frame when both
	// sides announced FeatureSettings, else the zero value (the defaults).
	// MaxFrameSize is always set: the preface's value, or the Settings
	// frame's when that is smaller.
	Settings Settings
}

// localPreface is the preface a handshake sends for features and s.
func localPreface(features Features, s Settings) Preface {
	return Preface{Version: Version, Features: features | FeatureSettings, MaxFrameSize: uint32(s.FrameLimit())}
}

// ClientHandshake runs the client's side of the connection handshake on
// rw (typically a net.Conn whose deadline the caller has set) and returns
// what it learned about the server. features are what this side supports
// (FeatureLZ4, FeatureStreams); the handshake adds FeatureSettings. s are
// this side's limits; s.MaxFrameSize also goes in the preface.
//
// The order, which neither side can deadlock on since each waits only for
// bytes the other has already sent, and which never shows a Settings
// frame to a peer without FeatureSettings:
//
//  1. the client sends its preface;
//  2. the server reads it and sends its preface, followed (in the same
//     write) by its Settings frame when both prefaces announce
//     FeatureSettings;
//  3. the client reads the server's preface and, when both announce
//     FeatureSettings, the server's Settings frame, and then sends its own
//     Settings frame;
//  4. the server reads the client's Settings frame, when both announce
//     FeatureSettings, as the first frame after the preface.
//
// A version 1 peer without FeatureSettings (the 13-byte preface only)
// sends and gets no Settings frame, and its settings are the defaults.
// The client may send frames as soon as ClientHandshake returns. The
// handshake reads no byte beyond the handshake's, so rw can be handed to a
// Reader afterwards. Errors are those of ReadPreface, a *FrameError about
// the Settings frame, or rw's.
func ClientHandshake(rw io.ReadWriter, features Features, s Settings) (Peer, error) {
	mine := localPreface(features, s)
	if _, err := rw.Write(AppendPreface(make([]byte, 0, PrefaceLen), mine)); err != nil {
		return Peer{}, fmt.Errorf("wire: sending preface: %w", err)
	}
	p, err := ReadPreface(rw)
	if err != nil {
		return Peer{}, err
	}
	peer := Peer{Preface: p, Features: mine.Negotiate(p), Settings: Settings{MaxFrameSize: p.MaxFrameSize}}
	if !peer.Features.Has(FeatureSettings) {
		return peer, nil
	}
	if err := peer.readSettings(rw); err != nil {
		return Peer{}, err
	}
	if _, err := rw.Write(AppendSettingsFrame(nil, s)); err != nil {
		return Peer{}, fmt.Errorf("wire: sending settings: %w", err)
	}
	return peer, nil
}

// ServerHandshake runs the server's side of the handshake that
// ClientHandshake describes on rw and returns what it learned about the
// client; features and s are as for ClientHandshake. The server may send
// frames as soon as it returns.
func ServerHandshake(rw io.ReadWriter, features Features, s Settings) (Peer, error) {
	p, err := ReadPreface(rw)
	if err != nil {
		return Peer{}, err
	}
	mine := localPreface(features, s)
	peer := Peer{Preface: p, Features: mine.Negotiate(p), Settings: Settings{MaxFrameSize: p.MaxFrameSize}}
	out := AppendPreface(make([]byte, 0, 64), mine)
	if peer.Features.Has(FeatureSettings) {
		out = AppendSettingsFrame(out, s)
	}
	if _, err := rw.Write(out); err != nil {
		return Peer{}, fmt.Errorf("wire: sending preface: %w", err)
	}
	if peer.Features.Has(FeatureSettings) {
		if err := peer.readSettings(rw); err != nil {
			return Peer{}, err
		}
	}
	return peer, nil
}

// readSettings reads the peer's Settings frame, exactly its bytes, into
// p.Settings, keeping the smaller max frame size.
func (p *Peer) readSettings(r io.Reader) error {
	var b [HeaderLen + MaxSettingsSize]byte
	if _, err := io.ReadFull(r, b[:HeaderLen]); err != nil {
		return fmt.Errorf("wire: reading settings: %w", unexpected(err))
	}
	h := b[:HeaderLen]
	n := binary.LittleEndian.Uint32(h[13:])
	switch {
	case h[0] != Magic || h[1] != Version || Type(h[2]) != TypeSettings:
		return malformed("expected a Settings frame after the preface, got bytes % x", h[:3])
	case h[3] != 0 || h[4] != 0 || binary.LittleEndian.Uint32(h[5:]) != 0 || binary.LittleEndian.Uint32(h[9:]) != 0:
		return malformed("Settings frame with non-zero flags, status, id or method (% x)", h[3:13])
	case n > MaxSettingsSize:
		return malformed("Settings frame of %d bytes exceeds the limit of %d bytes", n, MaxSettingsSize)
	}
	payload := b[HeaderLen : HeaderLen+int(n)]
	if _, err := io.ReadFull(r, payload); err != nil {
		return fmt.Errorf("wire: reading settings: %w", unexpected(err))
	}
	s, err := ParseSettings(payload)
	if err != nil {
		return err
	}
	if s.MaxFrameSize == 0 || s.MaxFrameSize > p.Settings.MaxFrameSize {
		s.MaxFrameSize = p.Settings.MaxFrameSize
	}
	p.Settings = s
	return nil
}

// unexpected turns io.EOF, a stream that ended where more was due, into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
