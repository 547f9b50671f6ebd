package wire_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/wire"
)

// A request frame written with AppendHeader, the body marshaled straight
// after it, and read back.
func Example() {
	body := []byte{0x0a, 0x03, 'A', 'd', 'a'} // what a generated MarshalAppend writes
	h := wire.Header{Type: wire.TypeRequest, ID: 1, Method: 0x98f998eb, Timeout: 250 * time.Millisecond}

	var conn bytes.Buffer // stands in for a net.Conn
	out := wire.AppendPreface(nil, wire.Preface{Features: wire.FeatureLZ4})
	out = wire.AppendHeader(out, &h, []string{"yrpc-app", "web"}, len(body))
	out = append(out, body...) // e.g. msg.MarshalAppend(out)
	conn.Write(out)

	peer, err := wire.ReadPreface(&conn)
	if err != nil {
		panic(err)
	}
	fmt.Println("peer features:", peer.Features, "max frame:", peer.MaxFrameSize)

	r := wire.NewReader(&conn, wire.ReaderOptions{})
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		md, _ := wire.ParseMetadata(f.Metadata, nil)
		fmt.Printf("%s id=%d method=%#x timeout=%v flags=%s md=%q body=% x\n",
			f.Type, f.ID, f.Method, f.Timeout, f.Flags, md, f.Body)
	}
	// Output:
	// peer features: lz4 max frame: 4194304
	// Request id=1 method=0x98f998eb timeout=250ms flags=deadline|metadata md=["yrpc-app" "web"] body=0a 03 41 64 61
}

// A Compressor compresses large bodies when the peer supports lz4.
func ExampleCompressor() {
	var c wire.Compressor
	body := bytes.Repeat([]byte("hello, yrpc! "), 400) // 5200 bytes
	h := wire.Header{Type: wire.TypeResponse, ID: 7}
	frame := c.AppendFrame(nil, &h, nil, body, 0)
	fmt.Println("frame smaller than body:", len(frame) < len(body))

	// The reader accepts compressed bodies only when lz4 was negotiated.
	f, err := wire.NewReader(bytes.NewReader(frame), wire.ReaderOptions{Features: wire.FeatureLZ4}).Next()
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Flags, bytes.Equal(f.Body, body))
	// Output:
	// frame smaller than body: true
	// compressed true
}

// An error response carries the code in Status and the message as body.
func ExampleAppendFrame() {
	h := wire.Header{Type: wire.TypeResponse, ID: 3, Status: 14} // rt.Unavailable
	frame := wire.AppendFrame(nil, &h, nil, []byte("server is closing"))
	f, _ := wire.NewReader(bytes.NewReader(frame), wire.ReaderOptions{}).Next()
	fmt.Printf("%s %d status=%d %q\n", f.Type, f.ID, f.Status, f.Body)
	// Output: Response 3 status=14 "server is closing"
}

// ReadPreface tells a yrpc peer from, say, an HTTP client.
func ExampleReadPreface() {
	_, err := wire.ReadPreface(bytes.NewReader([]byte("GET / HTTP/1.1\r\n\r\n")))
	fmt.Println(err)
	// Output: wire: bad preface magic "GET ", want "YRPC" (an HTTP client?)
}

// The handshake over an in-memory connection: each side learns the
// features both support and the other's limits, and sizes its Reader and
// its calls by them.
func ExampleClientHandshake() {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	go func() {
		peer, err := wire.ServerHandshake(server, wire.FeatureLZ4|wire.FeatureStreams,
			wire.Settings{MaxMetadataSize: 8 << 10, MaxConcurrentCalls: 1000})
		if err != nil {
			panic(err)
		}
		_ = wire.NewReader(server, wire.ReaderOptions{Features: peer.Features}) // then serve
	}()

	peer, err := wire.ClientHandshake(client, wire.FeatureLZ4, wire.Settings{})
	if err != nil {
		panic(err)
	}
	fmt.Println("negotiated:", peer.Features)
	fmt.Println("server limits:", peer.Settings.FrameLimit(), peer.Settings.MetadataLimit(), peer.Settings.MaxConcurrentCalls)

	// A call whose metadata the server would refuse fails here, alone.
	h := wire.Header{Type: wire.TypeRequest, ID: 1, Method: 7}
	err = peer.Settings.CheckSend(&h, []string{"blob", strings.Repeat("x", 10<<10)}, 100)
	fmt.Println(errors.Is(err, wire.ErrMetadataTooLarge), err)
	// Output:
	// negotiated: lz4|settings
	// server limits: 4194304 8192 1000
	// true wire: Request frame 1: metadata of 10247 bytes exceeds the peer's limit of 8192 bytes
}
