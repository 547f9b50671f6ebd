package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// v1Preface is what a side of version 1 without settings (today's main)
// sends: lz4 and a 1 MiB frame limit.
var v1Preface = Preface{Version: Version, Features: FeatureLZ4, MaxFrameSize: 1 << 20}

// v1Client runs the client side exactly as a version 1 peer without
// settings does: its 13-byte preface, then the server's.
func v1Client(c io.ReadWriter) (Preface, error) {
	if _, err := c.Write(AppendPreface(nil, v1Preface)); err != nil {
		return Preface{}, err
	}
	return ReadPreface(c)
}

// v1Server runs the server side as a version 1 peer does: the client's
// preface, then its own.
func v1Server(c io.ReadWriter) (Preface, error) {
	p, err := ReadPreface(c)
	if err != nil {
		return p, err
	}
	_, err = c.Write(AppendPreface(nil, v1Preface))
	return p, err
}

// pipe returns both ends of a synchronous in-memory connection (a write
// blocks until the peer has read it all, the strictest case for a
// handshake), with deadlines so that a deadlock fails the test instead of
// hanging it, closed at the end of the test.
func pipe(t *testing.T) (client, server net.Conn) {
	t.Helper()
	client, server = net.Pipe()
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range []net.Conn{client, server} {
		_ = c.SetDeadline(deadline)
		t.Cleanup(func() { c.Close() })
	}
	return client, server
}

// exchange runs a request and its response over the connection after the
// handshake: the client's Reader and the server's accept only what was
// negotiated (a version 1 side's Reader knows types 1-7 only, as
// Features 0 does here), so a stray Settings frame would fail it.
func exchange(t *testing.T, client, server net.Conn, clientFeat, serverFeat Features) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		f, err := NewReader(server, ReaderOptions{Features: serverFeat}).Next()
		if err == nil && (f.Type != TypeRequest || string(f.Body) != "ping") {
			err = errors.New("server got " + f.Type.String() + " " + string(f.Body))
		}
		if err == nil {
			_, err = server.Write(AppendFrame(nil, &Header{Type: TypeResponse, ID: f.ID}, nil, []byte("pong")))
		}
		done <- err
	}()
	if _, err := client.Write(AppendFrame(nil, &Header{Type: TypeRequest, ID: 1, Method: 7}, nil, []byte("ping"))); err != nil {
		t.Fatalf("client write: %v", err)
	}
	f, err := NewReader(client, ReaderOptions{Features: clientFeat}).Next()
	if err != nil || f.Type != TypeResponse || string(f.Body) != "pong" {
		t.Fatalf("client got %v, %v", f, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// TestHandshakeInterop runs the handshake between new sides and version 1
// sides without settings, in both directions, then a call over it.
func TestHandshakeInterop(t *testing.T) {
	clientSet := Settings{MaxMetadataSize: 2000, InitialStreamWindow: 1 << 17}
	serverSet := Settings{MaxFrameSize: 1 << 21, MaxMetadataSize: 1000, MaxConcurrentCalls: 100}
	newFeat := FeatureLZ4 | FeatureStreams
	for _, c := range []struct {
		name           string
		client, server func(io.ReadWriter) (Peer, error)
		wantClient     Peer // what the client learns of the server
		wantServer     Peer // what the server learns of the client
	}{
		{
			name:       "new client, new server",
			client:     func(c io.ReadWriter) (Peer, error) { return ClientHandshake(c, newFeat, clientSet) },
			server:     func(c io.ReadWriter) (Peer, error) { return ServerHandshake(c, newFeat, serverSet) },
			wantClient: Peer{Preface: Preface{Version: 1, Features: newFeat | FeatureSettings, MaxFrameSize: 1 << 21}, Features: newFeat | FeatureSettings, Settings: serverSet},
			wantServer: Peer{Preface: Preface{Version: 1, Features: newFeat | FeatureSettings, MaxFrameSize: DefaultMaxFrameSize}, Features: newFeat | FeatureSettings, Settings: Settings{MaxFrameSize: DefaultMaxFrameSize, MaxMetadataSize: 2000, InitialStreamWindow: 1 << 17}},
		},
		{
			name:       "version 1 client, new server",
			client:     func(c io.ReadWriter) (Peer, error) { p, err := v1Client(c); return Peer{Preface: p}, err },
			server:     func(c io.ReadWriter) (Peer, error) { return ServerHandshake(c, newFeat, serverSet) },
			wantClient: Peer{Preface: Preface{Version: 1, Features: newFeat | FeatureSettings, MaxFrameSize: 1 << 21}},
			wantServer: Peer{Preface: v1Preface, Features: FeatureLZ4, Settings: Settings{MaxFrameSize: 1 << 20}},
		},
		{
			name:       "new client, version 1 server",
			client:     func(c io.ReadWriter) (Peer, error) { return ClientHandshake(c, newFeat, clientSet) },
			server:     func(c io.ReadWriter) (Peer, error) { p, err := v1Server(c); return Peer{Preface: p}, err },
			wantClient: Peer{Preface: v1Preface, Features: FeatureLZ4, Settings: Settings{MaxFrameSize: 1 << 20}},
			wantServer: Peer{Preface: Preface{Version: 1, Features: newFeat | FeatureSettings, MaxFrameSize: DefaultMaxFrameSize}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, server := pipe(t)
			type result struct {
				p   Peer
				err error
			}
			srv := make(chan result, 1)
			go func() {
				p, err := c.server(server)
				srv <- result{p, err}
			}()
			gotClient, err := c.client(client)
			if err != nil {
				t.Fatalf("client handshake: %v", err)
			}
			s := <-srv
			if s.err != nil {
				t.Fatalf("server handshake: %v", s.err)
			}
			if diff := cmp.Diff(c.wantClient, gotClient); diff != "" {
				t.Errorf("client learned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantServer, s.p); diff != "" {
				t.Errorf("server learned (-want +got):\n%s", diff)
			}
			// A version 1 side's Reader has no features beyond lz4; a
			// new side's has what it negotiated.
			exchange(t, client, server, gotClient.Features|FeatureLZ4, s.p.Features|FeatureLZ4)
		})
	}
}

// TestHandshakeReadsExactly feeds the server the client's whole side at
// once, the Settings frame followed by a request: the handshake must
// leave the request for the Reader.
func TestHandshakeReadsExactly(t *testing.T) {
	in := AppendPreface(nil, Preface{Features: FeatureSettings})
	in = AppendSettingsFrame(in, Settings{MaxMetadataSize: 512})
	in = AppendFrame(in, &Header{Type: TypeRequest, ID: 1, Method: 2}, nil, []byte("call"))
	var out bytes.Buffer
	rw := struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(in), &out}
	peer, err := ServerHandshake(rw, FeatureLZ4, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if peer.Settings.MaxMetadataSize != 512 || peer.Features != FeatureSettings {
		t.Errorf("peer %+v", peer)
	}
	f, err := NewReader(rw, ReaderOptions{}).Next()
	if err != nil || f.Type != TypeRequest || string(f.Body) != "call" {
		t.Fatalf("after the handshake: %v, %v", f, err)
	}
	want := AppendSettingsFrame(AppendPreface(nil, Preface{Features: FeatureLZ4 | FeatureSettings}), Settings{})
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("server sent % x, want % x", out.Bytes(), want)
	}
}

func TestHandshakeErrors(t *testing.T) {
	pre := AppendPreface(nil, Preface{Features: FeatureSettings})
	settings := AppendSettingsFrame(nil, Settings{})
	long := rawFrame(TypeSettings, 0, 0, make([]byte, MaxSettingsSize+1)...)
	for _, c := range []struct {
		name    string
		in      []byte // what the client sends the server
		wantErr error
		msg     string
	}{
		{"no preface", nil, io.EOF, "reading preface: EOF"},
		{"http", []byte("GET / HTTP/1.1\r\n\r\n"), ErrBadPreface, "an HTTP client?"},
		{"no settings", pre, io.ErrUnexpectedEOF, "reading settings: unexpected EOF"},
		{"settings cut", append(bytes.Clone(pre), settings[:HeaderLen-1]...), io.ErrUnexpectedEOF, "reading settings"},
		{"payload cut", append(bytes.Clone(pre), rawFrame(TypeSettings, 0, 0, 1, 2)[:HeaderLen+1]...), io.ErrUnexpectedEOF, "reading settings"},
		{"request instead", append(bytes.Clone(pre), AppendFrame(nil, &Header{Type: TypeRequest, ID: 1}, nil, nil)...), ErrMalformed, "expected a Settings frame after the preface, got bytes 79 01 01"},
		{"settings with an id", append(bytes.Clone(pre), rawFrame(TypeSettings, 0, 1)...), ErrMalformed, "non-zero flags, status, id or method"},
		{"settings too long", append(bytes.Clone(pre), long...), ErrMalformed, "Settings frame of 1025 bytes exceeds the limit of 1024 bytes"},
		{"bad settings", append(bytes.Clone(pre), rawFrame(TypeSettings, 0, 0, 1, 5)...), ErrMalformed, "max frame size 5 is below the minimum 1024"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rw := struct {
				io.Reader
				io.Writer
			}{bytes.NewReader(c.in), io.Discard}
			_, err := ServerHandshake(rw, 0, Settings{})
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q, want one wrapping %v and saying %q", err, c.wantErr, c.msg)
			}
		})
	}
	// The client's side fails the same way on a bad server.
	rw := struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(append(bytes.Clone(pre), long...)), io.Discard}
	if _, err := ClientHandshake(rw, 0, Settings{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("client with an oversized Settings frame: %v", err)
	}
	if _, err := ClientHandshake(struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(nil), failWriter{}}, 0, Settings{}); err == nil || !strings.Contains(err.Error(), "sending preface: no") {
		t.Errorf("client with a failing write: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no") }

// TestHandshakeFrameLimit keeps the smaller of the preface's and the
// Settings frame's max frame sizes.
func TestHandshakeFrameLimit(t *testing.T) {
	for _, c := range []struct {
		preface, setting, want uint32
	}{
		{1 << 20, 0, 1 << 20},
		{1 << 20, 1 << 16, 1 << 16},
		{1 << 16, 1 << 20, 1 << 16},
	} {
		in := AppendPreface(nil, Preface{Features: FeatureSettings, MaxFrameSize: c.preface})
		in = AppendSettingsFrame(in, Settings{MaxFrameSize: c.setting})
		peer, err := ClientHandshake(struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(in), io.Discard}, 0, Settings{})
		if err != nil || peer.Settings.MaxFrameSize != c.want || peer.Settings.FrameLimit() != int(c.want) {
			t.Errorf("preface %d, setting %d: got %+v, %v; want %d", c.preface, c.setting, peer.Settings, err, c.want)
		}
	}
}

// TestSettingsGolden pins the examples in doc.go.
func TestSettingsGolden(t *testing.T) {
	pre := AppendPreface(nil, Preface{Features: FeatureLZ4 | FeatureSettings | FeatureStreams})
	if got, want := hex.EncodeToString(pre), "59525043"+"01"+"07000000"+"00004000"; got != want {
		t.Errorf("preface %s, want %s", got, want)
	}
	s := Settings{MaxMetadataSize: 16 << 10, MaxConcurrentCalls: 100, InitialStreamWindow: 64 << 10, ConnectionWindow: 1 << 20}
	const want = "79 01 08 00 00 00000000 00000000 0e000000" +
		"02 808001" + // max metadata size 16384
		"03 64" + // max concurrent calls 100
		"04 808004" + // initial stream window 65536
		"05 808040" // connection window 1048576
	if got := hex.EncodeToString(AppendSettingsFrame(nil, s)); got != strings.ReplaceAll(want, " ", "") {
		t.Errorf("settings frame\n got %s\nwant %s", got, strings.ReplaceAll(want, " ", ""))
	}
	if got := hex.EncodeToString(AppendSettingsFrame(nil, Settings{})); got != "7901080000000000000000000000000000" {
		t.Errorf("empty settings frame %s", got)
	}
}

func TestParseSettings(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want Settings
		msg  string // error message; "" for none
	}{
		{"empty", nil, Settings{}, ""},
		{"all", []byte{1, 0x80, 0x08, 2, 7, 3, 8, 4, 9, 5, 10}, Settings{1024, 7, 8, 9, 10}, ""},
		{"unknown ids ignored", []byte{6, 1, 0, 5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 7, 3, 2}, Settings{MaxConcurrentCalls: 2}, ""},
		{"later wins", []byte{3, 2, 3, 5}, Settings{MaxConcurrentCalls: 5}, ""},
		{"zero is the default", []byte{3, 2, 3, 0, 1, 0}, Settings{}, ""},
		{"id cut", []byte{0x80}, Settings{}, "bad id varint at offset 0 of 1"},
		{"value missing", []byte{3}, Settings{}, "bad value varint for id 3 at offset 1 of 1"},
		{"value above 32 bits", []byte{3, 0x80, 0x80, 0x80, 0x80, 0x10}, Settings{}, "setting 3 = 4294967296 exceeds 2^32-1"},
		{"frame limit too small", []byte{1, 0x80, 0x04}, Settings{}, "max frame size 512 is below the minimum 1024"},
		{"window too large", []byte{4, 0x80, 0x80, 0x80, 0x80, 0x08}, Settings{}, "window 2147483648 (setting 4) exceeds the maximum 2147483647"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSettings(c.in)
			if c.msg == "" {
				if err != nil || got != c.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
				}
				return
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want ErrMalformed saying %q", err, c.msg)
			}
		})
	}
}

func TestSettingsLimits(t *testing.T) {
	var zero Settings
	if zero.FrameLimit() != DefaultMaxFrameSize || zero.MetadataLimit() != DefaultMaxMetadataSize ||
		zero.StreamWindow() != DefaultStreamWindow || zero.ConnWindow() != DefaultConnectionWindow {
		t.Errorf("zero Settings limits: %d %d %d %d", zero.FrameLimit(), zero.MetadataLimit(), zero.StreamWindow(), zero.ConnWindow())
	}
	s := Settings{MaxFrameSize: 2048, MaxMetadataSize: 10, InitialStreamWindow: 3, ConnectionWindow: 4}
	if s.FrameLimit() != 2048 || s.MetadataLimit() != 10 || s.StreamWindow() != 3 || s.ConnWindow() != 4 {
		t.Errorf("limits of %+v: %d %d %d %d", s, s.FrameLimit(), s.MetadataLimit(), s.StreamWindow(), s.ConnWindow())
	}
}

func TestCheckSend(t *testing.T) {
	peer := Settings{MaxFrameSize: 1024, MaxMetadataSize: 64}
	h := &Header{Type: TypeRequest, ID: 9, Method: 1, Timeout: time.Second}
	manyPairs := make([]string, 2*MaxMetadataPairs+2)
	for _, c := range []struct {
		name    string
		peer    Settings
		md      []string
		body    int
		wantErr error
		msg     string
	}{
		{"fits", peer, []string{"k", "v"}, 900, nil, ""},
		{"exactly the limit", peer, []string{"k", "v"}, 1024 - FrameSize(h, []string{"k", "v"}, 0), nil, ""},
		{"one byte over", peer, []string{"k", "v"}, 1025 - FrameSize(h, []string{"k", "v"}, 0), ErrFrameTooLarge, "Request frame 9 of 1025 bytes exceeds the peer's limit of 1024 bytes"},
		{"metadata over", peer, []string{"k", strings.Repeat("v", 63)}, 0, ErrMetadataTooLarge, "Request frame 9: metadata of 66 bytes exceeds the peer's limit of 64 bytes"},
		{"odd key counts its empty value", Settings{MaxMetadataSize: 4}, []string{"k", "v", "k"}, 0, ErrMetadataTooLarge, "metadata of 7 bytes"},
		{"too many pairs", Settings{MaxMetadataSize: 1 << 20}, manyPairs, 0, ErrMetadataTooLarge, "1025 metadata pairs exceed the limit of 1024"},
		{"defaults", Settings{}, []string{"k", strings.Repeat("v", DefaultMaxMetadataSize)}, 0, ErrMetadataTooLarge, "limit of 16384 bytes"},
		{"default frame limit", Settings{}, nil, DefaultMaxFrameSize, ErrFrameTooLarge, "limit of 4194304 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.peer.CheckSend(h, c.md, c.body)
			if c.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want %v saying %q", err, c.wantErr, c.msg)
			}
		})
	}
	md := []string{"k", "v"}
	if n := testing.AllocsPerRun(100, func() { _ = peer.CheckSend(h, md, 10) }); n != 0 {
		t.Errorf("CheckSend: %v allocs, want 0", n)
	}
}
