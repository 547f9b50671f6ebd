package h2

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/internal/hpack"
)

func newTestReader(b []byte) *Reader { return newTestReaderMax(b, MinMaxFrameSize) }

func newTestReaderMax(b []byte, maxFrame int) *Reader {
	return NewReader(bufio.NewReaderSize(bytes.NewReader(b), FrameHeaderLen+maxFrame), maxFrame)
}

// Frames read back as written, their payloads in place, padding and
// priority fields removed.
func TestReaderRoundTrip(t *testing.T) {
	var b []byte
	b = AppendSettings(b, Setting{SettingInitialWindowSize, 1 << 20}, Setting{SettingMaxFrameSize, 1 << 15})
	b = AppendSettingsAck(b)
	b = AppendData(b, 1, true, []byte("data"))
	b = AppendPing(b, true, [8]byte{1, 2, 3})
	b = AppendWindowUpdate(b, 3, 77)
	b = AppendRSTStream(b, 5, ErrCancel)
	b = AppendGoAway(b, 7, ErrEnhanceYourCalm, []byte("calm"))
	p := []byte{2, 0x80, 0, 0, 9, 200, 'h', 'b', 0, 0} // pad 2, exclusive on 9, weight 200
	b = append(AppendFrameHeader(b, FrameHeaders, FlagPadded|FlagPriority|FlagEndHeaders, 11, len(p)), p...)
	b = append(AppendFrameHeader(b, 0xee, 0, 0, 3), 1, 2, 3) // unknown type: ignored by the caller
	r := newTestReader(b)
	var f Frame
	next := func() *Frame {
		t.Helper()
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	var got []Setting
	_ = next().Settings(func(s Setting) error { got = append(got, s); return nil })
	if len(got) != 2 || got[0] != (Setting{SettingInitialWindowSize, 1 << 20}) || got[1].Val != 1<<15 {
		t.Errorf("settings %v", got)
	}
	if f := next(); f.Type != FrameSettings || !f.Has(FlagAck) {
		t.Errorf("ack: %+v", f)
	}
	if f := next(); f.Type != FrameData || string(f.Data) != "data" || !f.Has(FlagEndStream) || f.StreamID != 1 {
		t.Errorf("data: %+v", f)
	}
	if f := next(); f.Type != FramePing || f.PingData != [8]byte{1, 2, 3} {
		t.Errorf("ping: %+v", f)
	}
	if f := next(); f.Increment != 77 || f.StreamID != 3 {
		t.Errorf("window update: %+v", f)
	}
	if f := next(); f.ErrCode != ErrCancel || f.StreamID != 5 {
		t.Errorf("reset: %+v", f)
	}
	if f := next(); f.LastStreamID != 7 || f.ErrCode != ErrEnhanceYourCalm || string(f.Data) != "calm" {
		t.Errorf("goaway: %+v", f)
	}
	if f := next(); string(f.Data) != "hb" || f.DependsOn != 9 || f.SelfDependent() || f.Length != len(p) {
		t.Errorf("headers: %+v", f)
	}
	if f := next(); f.Type != 0xee || len(f.Data) != 3 {
		t.Errorf("unknown: %+v", f)
	}
	if err := r.Next(&f); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
}

// Ready tells whether a whole frame is buffered.
func TestReaderReady(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewReader(bufio.NewReaderSize(pr, 32<<10), MinMaxFrameSize)
	if r.Ready() {
		t.Error("ready with nothing")
	}
	frames := AppendData(AppendData(nil, 1, false, []byte("a")), 1, true, []byte("bb"))
	go func() { _, _ = pw.Write(frames) }()
	var f Frame
	if err := r.Next(&f); err != nil || string(f.Data) != "a" {
		t.Fatal(f, err)
	}
	if !r.Ready() || r.Buffered() != FrameHeaderLen+2 {
		t.Errorf("second frame buffered: ready %v, %d bytes", r.Ready(), r.Buffered())
	}
}

// Frames RFC 9113 forbids are errors of the connection or of their
// stream, with the code it says.
func TestReaderErrors(t *testing.T) {
	hdr := func(typ FrameType, flags uint8, id uint32, p ...byte) []byte {
		return append(AppendFrameHeader(nil, typ, flags, id, len(p)), p...)
	}
	for _, c := range []struct {
		name   string
		b      []byte
		code   ErrCode
		stream bool
	}{
		{"DATA on stream 0", hdr(FrameData, 0, 0, 1), ErrProtocol, false},
		{"padding past the payload", hdr(FrameData, FlagPadded, 1, 3, 1, 2), ErrProtocol, false},
		{"padded without a pad length", hdr(FrameData, FlagPadded, 1), ErrFrameSize, false},
		{"HEADERS on stream 0", hdr(FrameHeaders, FlagEndHeaders, 0), ErrProtocol, false},
		{"HEADERS too short for its priority", hdr(FrameHeaders, FlagEndHeaders|FlagPriority, 1, 0, 0), ErrFrameSize, false},
		{"PRIORITY of 4 bytes", hdr(FramePriority, 0, 1, 0, 0, 0, 0), ErrFrameSize, true},
		{"PRIORITY on itself", hdr(FramePriority, 0, 1, 0, 0, 0, 1, 0), ErrProtocol, true},
		{"RST_STREAM on stream 0", hdr(FrameRSTStream, 0, 0, 0, 0, 0, 0), ErrProtocol, false},
		{"SETTINGS on a stream", hdr(FrameSettings, 0, 1), ErrProtocol, false},
		{"SETTINGS of 5 bytes", hdr(FrameSettings, 0, 0, 0, 1, 0, 0, 0), ErrFrameSize, false},
		{"PUSH_PROMISE", hdr(FramePushPromise, 0, 1, 0, 0, 0, 2), ErrProtocol, false},
		{"PING on a stream", hdr(FramePing, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), ErrProtocol, false},
		{"GOAWAY of 7 bytes", hdr(FrameGoAway, 0, 0, 0, 0, 0, 0, 0, 0, 0), ErrFrameSize, false},
		{"WINDOW_UPDATE of 0 on a stream", hdr(FrameWindowUpdate, 0, 1, 0, 0, 0, 0), ErrProtocol, true},
		{"WINDOW_UPDATE of 0 on the connection", hdr(FrameWindowUpdate, 0, 0, 0, 0, 0, 0), ErrProtocol, false},
		{"CONTINUATION alone", hdr(FrameContinuation, FlagEndHeaders, 1), ErrProtocol, false},
		{"PING inside a header block", append(hdr(FrameHeaders, 0, 1), hdr(FramePing, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)...), ErrProtocol, false},
		{"CONTINUATION of another stream", append(hdr(FrameHeaders, 0, 1), hdr(FrameContinuation, FlagEndHeaders, 3)...), ErrProtocol, false},
		{"a frame over the maximum size", AppendData(nil, 1, false, make([]byte, MinMaxFrameSize+1)), ErrFrameSize, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestReader(c.b)
			var f Frame
			var err error
			for err == nil {
				err = r.Next(&f)
			}
			var ce *ConnError
			var se *StreamError
			switch {
			case c.stream && errors.As(err, &se) && se.Code == c.code:
			case !c.stream && errors.As(err, &ce) && ce.Code == c.code:
			default:
				t.Errorf("got %v, want a %s error (stream %v)", err, c.code, c.stream)
			}
		})
	}
}

// Settings RFC 9113 forbids are connection errors.
func TestSettingCheck(t *testing.T) {
	for s, want := range map[Setting]ErrCode{
		{SettingEnablePush, 2}:                     ErrProtocol,
		{SettingInitialWindowSize, 1 << 31}:        ErrFlowControl,
		{SettingMaxFrameSize, MinMaxFrameSize - 1}: ErrProtocol,
		{SettingMaxFrameSize, MaxMaxFrameSize + 1}: ErrProtocol,
	} {
		if err := s.Check(); err == nil || err.Code != want {
			t.Errorf("%+v: %v, want %s", s, err, want)
		}
	}
	for _, s := range []Setting{{SettingEnablePush, 1}, {SettingInitialWindowSize, MaxWindow}, {SettingMaxFrameSize, MaxMaxFrameSize}, {0x99, 1 << 31}} {
		if err := s.Check(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// A header block longer than the peer's maximum frame size is split
// into HEADERS and CONTINUATION frames that decode as one block.
func TestBlockEncoderSplits(t *testing.T) {
	e := NewBlockEncoder()
	long := strings.Repeat("0123456789", 5000)
	for _, maxFrame := range []int{MinMaxFrameSize, 1 << 20} {
		e.Start([]byte("prefix"))
		e.Field(":status", "200", false)
		e.Field("x-long", long, true)
		b := e.End(7, true, maxFrame)
		if string(b[:6]) != "prefix" {
			t.Fatal("the buffer's bytes before the block changed")
		}
		r := newTestReaderMax(b[6:], max(maxFrame, 64<<10))
		var block []byte
		var types []FrameType
		var f Frame
		for r.Next(&f) == nil {
			types = append(types, f.Type)
			block = append(block, f.Data...)
			if f.Type == FrameHeaders && !f.Has(FlagEndStream) || f.StreamID != 7 {
				t.Errorf("frame %+v", f)
			}
		}
		if want := (len(block) + maxFrame - 1) / maxFrame; len(types) != want {
			t.Errorf("max frame %d: %d frames %v, want %d", maxFrame, len(types), types, want)
		}
		fields, err := decodeFull(block)
		if err != nil || len(fields) != 2 || fields[1].Value != long {
			t.Errorf("max frame %d: %v %v", maxFrame, fields, err)
		}
		e = NewBlockEncoder() // a fresh decoder above: a fresh encoder
	}
}

// A request's header block: pseudo-header fields, the fields the server
// reads, the others in order as metadata; RFC 9113 section 8's rules.
func TestHeaderDecoder(t *testing.T) {
	encode := func(kv ...string) []byte {
		var b []byte
		enc := hpack.NewEncoder()
		for i := 0; i+1 < len(kv); i += 2 {
			b = enc.AppendField(b, kv[i], kv[i+1], false)
		}
		return b
	}
	base := []string{":method", "POST", ":scheme", "https", ":path", "/p.S/M", ":authority", "a"}
	with := func(kv ...string) []string { return append(append([]string{}, base...), kv...) }
	for _, c := range []struct {
		name      string
		kv        []string
		malformed bool
		tooLarge  bool
		check     func(r *Request) bool
	}{
		{"a gRPC request", with("content-type", "application/grpc", "te", "trailers", "grpc-timeout", "1S", "grpc-encoding", "gzip",
			"grpc-accept-encoding", "gzip", "user-agent", "ua", "x-k", "1", "x-k", "2"), false, false, func(r *Request) bool {
			return r.Method == "POST" && r.Path == "/p.S/M" && r.Authority == "a" && r.ContentType == "application/grpc" && r.Timeout == "1S" &&
				r.Encoding == "gzip" && r.AcceptEncoding == "gzip" && r.ContentLength == -1 &&
				strings.Join(r.Meta, ",") == "user-agent,ua,x-k,1,x-k,2"
		}},
		{"content-length", with("content-length", "12"), false, false, func(r *Request) bool { return r.ContentLength == 12 }},
		{"two content-lengths that differ", with("content-length", "12", "content-length", "13"), true, false, nil},
		{"an uppercase name", with("X-K", "1"), true, false, nil},
		{"a space in a name", with("x k", "1"), true, false, nil},
		{"a NUL in a value", with("x-k", "a\x00b"), true, false, nil},
		{"a tab in a value", with("x-k", "a\tb"), false, false, nil},
		{"connection", with("connection", "close"), true, false, nil},
		{"transfer-encoding", with("transfer-encoding", "chunked"), true, false, nil},
		{"te: gzip", with("te", "gzip"), true, false, nil},
		{"a repeated :path", with(":path", "/x"), true, false, nil},
		{"an unknown pseudo-header", with(":protocol", "websocket"), true, false, nil},
		{"a pseudo-header after a regular field", append([]string{"x-k", "1"}, base...), true, false, nil},
		{"no :scheme", []string{":method", "POST", ":path", "/a"}, true, false, nil},
		{"a relative :path", []string{":method", "POST", ":scheme", "http", ":path", "a"}, true, false, nil},
		{"an empty :method", []string{":method", "", ":scheme", "http", ":path", "/a"}, true, false, nil},
		{"over the list size", with("x-big", strings.Repeat("b", 2000)), false, true, func(r *Request) bool { return len(r.Meta) == 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewHeaderDecoder(1024)
			var r Request
			d.Begin(&r, false)
			block := encode(c.kv...)
			for len(block) > 0 { // in 70-byte fragments: fields span them
				n := min(70, len(block))
				if err := d.Write(block[:n]); err != nil {
					t.Fatal(err)
				}
				block = block[n:]
			}
			if err := d.End(); err != nil {
				t.Fatal(err)
			}
			if (r.Malformed != "") != c.malformed || r.TooLarge != c.tooLarge {
				t.Errorf("malformed %q, too large %v", r.Malformed, r.TooLarge)
			}
			if c.check != nil && !c.check(&r) {
				t.Errorf("request %+v", r)
			}
			// The decoder stays in sync: the next block decodes.
			d.Begin(&r, false)
			if err := d.Write(encode(base...)); err != nil || d.End() != nil || r.Malformed != "" || r.Path != "/p.S/M" {
				t.Errorf("next block: %v %+v", err, r)
			}
		})
	}
}

// Trailers keep no fields; pseudo-header fields make them malformed. A
// block of too many frames or bytes is a connection error.
func TestHeaderDecoderTrailersAndLimits(t *testing.T) {
	d := NewHeaderDecoder(1024)
	var r Request
	d.Begin(&r, true)
	if err := d.Write(hpack.NewEncoder().AppendField(nil, "x-t", "1", false)); err != nil || d.End() != nil || r.Malformed != "" || len(r.Meta) != 0 {
		t.Errorf("trailers: %v %+v", err, r)
	}
	d.Begin(&r, true)
	if err := d.Write(hpack.NewEncoder().AppendField(nil, ":path", "/", false)); err != nil || d.End() != nil || r.Malformed == "" {
		t.Errorf("trailers with :path: %v %+v", err, r)
	}
	d.Begin(&r, false)
	var err *ConnError
	for i := 0; i <= MaxBlockFrames && err == nil; i++ {
		err = d.Write(nil)
	}
	if err == nil || err.Code != ErrEnhanceYourCalm {
		t.Errorf("%d empty fragments: %v", MaxBlockFrames+1, err)
	}
	d = NewHeaderDecoder(1024)
	d.Begin(&r, false)
	if err := d.Write(make([]byte, minBlockBytes+1)); err == nil || err.Code != ErrEnhanceYourCalm {
		t.Errorf("a block of %d bytes: %v", minBlockBytes+1, err)
	}
	d = NewHeaderDecoder(1024)
	d.Begin(&r, false)
	if err := d.Write([]byte{0x80 | 70}); err != nil {
		t.Fatal(err)
	}
	if err := d.End(); err == nil || err.Code != ErrCompression {
		t.Errorf("an index past the tables: %v", err)
	}
}

// A receive window: bytes past it are refused, updates are batched and
// sent once a quarter is consumed, or when the peer runs low.
func TestInflow(t *testing.T) {
	var f Inflow
	f.Init(1000)
	if !f.Take(600) || f.Take(401) || f.Avail() != 400 {
		t.Fatalf("take: avail %d", f.Avail())
	}
	if inc := f.Add(100); inc != 0 {
		t.Errorf("a tenth consumed: update of %d", inc)
	}
	if inc := f.Add(150); inc != 250 || f.Avail() != 650 {
		t.Errorf("a quarter consumed: update of %d, avail %d", inc, f.Avail())
	}
	// The peer low on credit: held bytes must not stop updates.
	f.Init(1000)
	f.Take(1000)
	if inc := f.Add(10); inc != 10 || f.Avail() != 10 {
		t.Errorf("no credit left: update of %d, avail %d", inc, f.Avail())
	}
	w := int64(MaxWindow - 5)
	if !AddWindow(&w, 5) || AddWindow(&w, 1) || w != MaxWindow {
		t.Errorf("AddWindow: %d", w)
	}
}

// The reader and the header decoder take any bytes without panicking,
// and within the frame size, and a request they accept is well formed.
func FuzzReader(f *testing.F) {
	e := NewBlockEncoder()
	e.Start(nil)
	for _, kv := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/a.B/C"}, {"content-type", "application/grpc"}, {"user-agent", "x/1"}, {"grpc-timeout", "1S"}} {
		e.Field(kv[0], kv[1], false)
	}
	seed := AppendSettings(nil, Setting{SettingInitialWindowSize, 100})
	seed = append(seed, e.End(1, false, 8)...)
	seed = AppendData(seed, 1, true, []byte{0, 0, 0, 0, 1, 'x'})
	seed = AppendWindowUpdate(AppendPing(seed, false, [8]byte{}), 0, 10)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newTestReader(b)
		d := NewHeaderDecoder(4096)
		var req Request
		var fr Frame
		for {
			err := r.Next(&fr)
			var se *StreamError
			if errors.As(err, &se) {
				continue
			}
			if err != nil {
				return
			}
			if fr.Length > MinMaxFrameSize {
				t.Fatalf("frame of %d bytes", fr.Length)
			}
			switch fr.Type {
			case FrameHeaders:
				d.Begin(&req, false)
				fallthrough
			case FrameContinuation:
				if d.Write(fr.Data) != nil {
					return
				}
				if !fr.Has(FlagEndHeaders) {
					continue
				}
				if d.End() != nil {
					return
				}
				checkRequest(t, &req, 4096)
			}
		}
	})
}

// checkRequest fails t if req, a request the decoder accepted (neither
// malformed nor too large), lacks a pseudo-header field, exceeds maxList
// or carries metadata that is not lowercase tokens or belongs to the
// transport.
func checkRequest(t *testing.T, req *Request, maxList int) {
	t.Helper()
	if req.Malformed != "" || req.TooLarge {
		return
	}
	if req.Method == "" || req.Scheme == "" || req.Path == "" || req.Size > maxList || len(req.Meta)%2 != 0 {
		t.Fatalf("accepted %+v", req)
	}
	size := 0
	for i := 0; i+1 < len(req.Meta); i += 2 {
		k, v := req.Meta[i], req.Meta[i+1]
		size += len(k) + len(v) + 32
		if checkField(k, v) != "" || k[0] == ':' || k == "te" || k == "connection" || k == "content-type" || k == "grpc-timeout" {
			t.Fatalf("accepted metadata %q: %q", k, v)
		}
	}
	if size > req.Size {
		t.Fatalf("metadata of %d bytes in a list of %d", size, req.Size)
	}
}

// decodeFull decodes a header block with a fresh decoder.
func decodeFull(block []byte) ([]hpack.Field, error) {
	var fs []hpack.Field
	err := hpack.NewDecoder(hpack.DefaultTableSize, 1<<20).Decode(block, func(f hpack.Field) { fs = append(fs, f) })
	return fs, err
}
