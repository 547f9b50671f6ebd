package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestPrefaceRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in, want Preface
	}{
		{Preface{}, Preface{Version: Version, MaxFrameSize: DefaultMaxFrameSize}},
		{Preface{Features: FeatureLZ4, MaxFrameSize: 1 << 30}, Preface{Version: Version, Features: FeatureLZ4, MaxFrameSize: 1 << 30}},
		{Preface{Features: 0xffffffff, MaxFrameSize: MinFrameLimit}, Preface{Version: Version, Features: 0xffffffff, MaxFrameSize: MinFrameLimit}},
	} {
		b := AppendPreface(nil, c.in)
		if len(b) != PrefaceLen {
			t.Fatalf("preface is %d bytes, want %d", len(b), PrefaceLen)
		}
		// One byte at a time, and with a frame following that must stay unread.
		src := bytes.NewReader(append(b, Magic))
		got, err := ReadPreface(iotest.OneByteReader(src))
		if err != nil || got != c.want {
			t.Errorf("ReadPreface(AppendPreface(%+v)) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if src.Len() != 1 {
			t.Errorf("ReadPreface read past the preface")
		}
	}
}

func TestPrefaceGolden(t *testing.T) {
	got := hex.EncodeToString(AppendPreface(nil, Preface{Features: FeatureLZ4}))
	if want := "59525043" + "01" + "01000000" + "00004000"; got != want {
		t.Fatalf("preface %s, want %s", got, want)
	}
}

func TestReadPrefaceErrors(t *testing.T) {
	good := AppendPreface(nil, Preface{})
	for _, c := range []struct {
		name    string
		in      []byte
		wantErr error
		msg     string
	}{
		{"empty", nil, io.EOF, "wire: reading preface: EOF"},
		{"short magic", []byte("YR"), io.ErrUnexpectedEOF, "unexpected EOF"},
		{"short rest", good[:8], io.ErrUnexpectedEOF, "unexpected EOF"},
		{"magic only", good[:4], io.ErrUnexpectedEOF, "unexpected EOF"},
		{"http", []byte("GET / HTTP/1.1\r\n\r\n"), ErrBadPreface, `bad preface magic "GET ", want "YRPC" (an HTTP client?)`},
		{"http post", []byte("POST /x HTTP/1.1\r\n\r\n"), ErrBadPreface, "(an HTTP client?)"},
		{"http2", []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), ErrBadPreface, "(an HTTP/2 client?)"},
		{"tls", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}, ErrBadPreface, "(a TLS client?)"},
		{"frame", AppendFrame(nil, &Header{Type: TypePing}, nil, nil), ErrBadPreface, "skipped the preface"},
		{"garbage", []byte("\x00\x01\x02\x03garbage!!"), ErrBadPreface, `bad preface magic "\x00\x01\x02\x03", want "YRPC"`},
		{"version", append([]byte("YRPC\x02"), good[5:]...), ErrVersion, "peer speaks protocol version 2, this side supports 1"},
		{"tiny frames", AppendPreface(nil, Preface{MaxFrameSize: 100}), ErrBadPreface, "max frame size 100 is below the minimum 1024"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadPreface(bytes.NewReader(c.in))
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q, want one wrapping %v and saying %q", err, c.wantErr, c.msg)
			}
		})
	}
}

func TestNegotiate(t *testing.T) {
	a := Preface{Features: FeatureLZ4 | 1<<5}
	b := Preface{Features: FeatureLZ4 | 1<<7}
	if got := a.Negotiate(b); got != FeatureLZ4 {
		t.Errorf("Negotiate = %v, want lz4", got)
	}
	if got := a.Negotiate(Preface{}); got.Has(FeatureLZ4) {
		t.Errorf("Negotiate with a peer without lz4 = %v", got)
	}
}
