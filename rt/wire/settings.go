package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// SettingID names one setting in a Settings frame.
type SettingID uint64

// Setting ids. A receiver ignores ids it does not know, so new settings
// need no new protocol version.
const (
	// SettingMaxFrameSize repeats the preface's max frame size; when both
	// are sent the receiver keeps the smaller.
	SettingMaxFrameSize SettingID = 1 + iota
	// SettingMaxMetadataSize is the largest metadata block the sender
	// accepts.
	SettingMaxMetadataSize
	// SettingMaxConcurrentCalls is how many calls and streams the sender
	// serves at once on the connection.
	SettingMaxConcurrentCalls
	// SettingInitialStreamWindow is the credit, in bytes, the peer has on
	// each new stream.
	SettingInitialStreamWindow
	// SettingConnectionWindow is the credit, in bytes, the peer has on the
	// connection's stream messages.
	SettingConnectionWindow
)

// MaxSettingsSize is the largest Settings frame payload a side reads: a
// bound for a frame read before any limit is known.
const MaxSettingsSize = 1024

// Settings are the limits a side announces to its peer in the handshake.
// A zero field is not sent and means the default (so a peer that sends no
// Settings, like a version 1 peer without FeatureSettings, has the
// defaults); use the limit methods (FrameLimit, ...) rather than the
// fields to read them. A Settings value is plain data: safe to copy and to
// share read-only between goroutines.
type Settings struct {
	// MaxFrameSize is the largest frame, header included, the side
	// accepts; 0 means DefaultMaxFrameSize. It also goes in the preface.
	MaxFrameSize uint32
	// MaxMetadataSize is the largest metadata block the side accepts; 0
	// means DefaultMaxMetadataSize.
	MaxMetadataSize uint32
	// MaxConcurrentCalls is how many calls and streams the side serves at
	// once on one connection; 0 means no limit announced (the side may
	// still refuse calls).
	MaxConcurrentCalls uint32
	// InitialStreamWindow is the credit the peer starts each stream with;
	// 0 means DefaultStreamWindow. At most MaxWindow.
	InitialStreamWindow uint32
	// ConnectionWindow is the credit the peer starts the connection with;
	// 0 means DefaultConnectionWindow. At most MaxWindow.
	ConnectionWindow uint32
}

// FrameLimit returns MaxFrameSize, or DefaultMaxFrameSize when it is 0.
func (s Settings) FrameLimit() int { return orDefault(s.MaxFrameSize, DefaultMaxFrameSize) }

// MetadataLimit returns MaxMetadataSize, or DefaultMaxMetadataSize when it
// is 0.
func (s Settings) MetadataLimit() int { return orDefault(s.MaxMetadataSize, DefaultMaxMetadataSize) }

// StreamWindow returns InitialStreamWindow, or DefaultStreamWindow when it
// is 0.
func (s Settings) StreamWindow() int { return orDefault(s.InitialStreamWindow, DefaultStreamWindow) }

// ConnWindow returns ConnectionWindow, or DefaultConnectionWindow when it
// is 0.
func (s Settings) ConnWindow() int { return orDefault(s.ConnectionWindow, DefaultConnectionWindow) }

func orDefault(v uint32, def int) int {
	if v == 0 {
		return def
	}
	return int(v)
}

// fields lists the settings in id order, for the encoder and the parser.
func (s *Settings) fields() [5]*uint32 {
	return [...]*uint32{&s.MaxFrameSize, &s.MaxMetadataSize, &s.MaxConcurrentCalls, &s.InitialStreamWindow, &s.ConnectionWindow}
}

// AppendSettingsFrame appends a Settings frame carrying s's non-zero
// fields, in id order, to dst.
func AppendSettingsFrame(dst []byte, s Settings) []byte {
	var pairs [5 * 2 * binary.MaxVarintLen64]byte
	p := pairs[:0]
	for i, v := range s.fields() {
		if *v != 0 {
			p = binary.AppendUvarint(p, uint64(i)+1)
			p = binary.AppendUvarint(p, uint64(*v))
		}
	}
	return AppendFrame(dst, &Header{Type: TypeSettings}, nil, p)
}

// ParseSettings decodes the payload of a Settings frame (the bytes after
// its header): uvarint id, uvarint value pairs. Unknown ids are ignored; a
// later pair overrides an earlier one with the same id; a value of 0 is
// the default, as if left out. A truncated varint, a known setting above
// 2^32-1, a max frame size below MinFrameLimit or a window above MaxWindow
// is a *FrameError wrapping ErrMalformed.
func ParseSettings(p []byte) (Settings, error) {
	var s Settings
	fields := s.fields()
	for i := 0; i < len(p); {
		id, k := binary.Uvarint(p[i:])
		if k <= 0 {
			return Settings{}, malformed("settings: bad id varint at offset %d of %d", i, len(p))
		}
		i += k
		v, k := binary.Uvarint(p[i:])
		if k <= 0 {
			return Settings{}, malformed("settings: bad value varint for id %d at offset %d of %d", id, i, len(p))
		}
		i += k
		if id == 0 || id > uint64(len(fields)) {
			continue // unknown: a later version's setting
		}
		if err := checkSetting(SettingID(id), v); err != nil {
			return Settings{}, err
		}
		*fields[id-1] = uint32(v)
	}
	return s, nil
}

func checkSetting(id SettingID, v uint64) error {
	switch {
	case v > math.MaxUint32:
		return malformed("settings: setting %d = %d exceeds 2^32-1", id, v)
	case id == SettingMaxFrameSize && v != 0 && v < MinFrameLimit:
		return malformed("settings: max frame size %d is below the minimum %d", v, MinFrameLimit)
	case (id == SettingInitialStreamWindow || id == SettingConnectionWindow) && v > MaxWindow:
		return malformed("settings: window %d (setting %d) exceeds the maximum %d", v, id, MaxWindow)
	}
	return nil
}

// CheckSend reports whether a frame with header h, metadata md and a body
// of bodyLen bytes (uncompressed) fits the limits of a peer that announced
// s, so that a caller can refuse an oversized call locally instead of
// having the peer close the connection. It returns nil, or a *FrameError
// wrapping ErrMetadataTooLarge (metadata above MetadataLimit, or more than
// MaxMetadataPairs pairs) or ErrFrameTooLarge (FrameSize above
// FrameLimit). A compressed frame is never larger than FrameSize says, and
// its decompressed body is at most bodyLen, so the check holds for it too.
// It does not allocate unless it fails.
func (s Settings) CheckSend(h *Header, md []string, bodyLen int) error {
	if len(md) > 0 {
		if pairs := (len(md) + 1) / 2; pairs > MaxMetadataPairs {
			return &FrameError{
				Reason: fmt.Sprintf("%s frame %d: %d metadata pairs exceed the limit of %d", h.Type, h.ID, pairs, MaxMetadataPairs),
				Err:    ErrMetadataTooLarge,
			}
		}
		if n, limit := MetadataSize(md), s.MetadataLimit(); n > limit {
			return &FrameError{
				Reason: fmt.Sprintf("%s frame %d: metadata of %d bytes exceeds the peer's limit of %d bytes", h.Type, h.ID, n, limit),
				Err:    ErrMetadataTooLarge,
			}
		}
	}
	if n, limit := FrameSize(h, md, bodyLen), s.FrameLimit(); n > limit {
		return &FrameError{
			Reason: fmt.Sprintf("%s frame %d of %d bytes exceeds the peer's limit of %d bytes", h.Type, h.ID, n, limit),
			Err:    ErrFrameTooLarge,
		}
	}
	return nil
}
