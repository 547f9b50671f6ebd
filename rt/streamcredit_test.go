package rt_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// Stream messages that cross their stream's end (sent before the sender
// read the close or reset; the receiver has forgotten the stream) still
// count against the connection's window, and are granted back, as those
// of an open stream are. Both sides used to drop them uncounted: a peer
// that sent as its streams ended lost that much connection credit for
// good, until every stream of the connection stalled.

// crossingMessages appends to b messages for stream id whose cost adds up
// to the connection window of settings s and no more (all of them are
// within the sender's credit), then a ping with id ping; it returns the
// frames and their cost.
func crossingMessages(b []byte, id uint32, s wire.Settings, ping uint32) ([]byte, int) {
	body := make([]byte, 8<<10)
	sent := 0
	for sent+wire.MessageCost(len(body)) <= s.ConnWindow() {
		b = wire.AppendFrame(b, &wire.Header{Type: wire.TypeStreamMessage, ID: id}, nil, body)
		sent += wire.MessageCost(len(body))
	}
	return wire.AppendFrame(b, &wire.Header{Type: wire.TypePing, ID: ping}, nil, nil), sent
}

// grantedUntilPong reads frames from r until the pong of ping, and
// returns the connection credit granted before it.
func grantedUntilPong(r *wire.Reader, ping uint32) (int, error) {
	granted := 0
	for {
		f, err := r.Next()
		if err != nil {
			return granted, fmt.Errorf("reading up to the pong: %w (granted %d bytes)", err, granted)
		}
		switch {
		case f.Type == wire.TypeWindowUpdate && f.ID == 0:
			granted += int(f.Increment)
		case f.Type == wire.TypePong && f.ID == ping:
			return granted, nil
		}
	}
}

// The server's side: messages of a stream whose handler returned.
func TestServerGrantsCreditOfMessagesAfterClose(t *testing.T) {
	desc := oneStream("test.Gone", "Gone", 0x3405, rt.BidiStreaming, func(rt.ServerStreamer) error { return nil })
	e := newEnvWith(t, func(s *rt.Server) { s.RegisterService(&desc, struct{}{}) }, nil)
	c, err := net.Dial("tcp", e.lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // a bound should the server hang, not a wait
	peer, err := wire.ClientHandshake(c, wire.FeatureSettings|wire.FeatureStreams, wire.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	r := wire.NewReader(c, wire.ReaderOptions{Features: peer.Features})
	if _, err := c.Write(wire.AppendStreamOpen(nil, 1, 0x3405, 0, nil)); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("waiting for the stream's close: %v", err)
		}
		if f.Type == wire.TypeStreamClose && f.ID == 1 {
			break
		}
	}
	b, sent := crossingMessages(nil, 1, peer.Settings, 7)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	// Grants go out for every quarter of the window consumed.
	granted, err := grantedUntilPong(r, 7)
	if err != nil || granted < sent-peer.Settings.ConnWindow()/4 {
		t.Fatalf("the server granted %d bytes back of the %d that the messages of a closed stream cost (%v)", granted, sent, err)
	}
}

// The client's side: messages of a stream that the server closed, from a
// server of the wire protocol's own.
func TestClientGrantsCreditOfMessagesAfterClose(t *testing.T) {
	desc := oneStream("test.Gone", "Gone", 0x3405, rt.BidiStreaming, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	type result struct {
		granted, sent, window int
		err                   error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() { done <- res }()
		c, err := lis.Accept()
		if err != nil {
			res.err = err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // a bound should the client hang, not a wait
		peer, err := wire.ServerHandshake(c, wire.FeatureSettings|wire.FeatureStreams, wire.Settings{})
		if err != nil {
			res.err = err
			return
		}
		r := wire.NewReader(c, wire.ReaderOptions{Features: peer.Features})
		var ids []uint32
		for len(ids) < 2 {
			f, err := r.Next()
			if err != nil {
				res.err = fmt.Errorf("waiting for the streams: %w", err)
				return
			}
			if f.Type == wire.TypeStreamOpen {
				ids = append(ids, f.ID)
			}
		}
		// The first stream ends; messages the server sent before it knew
		// follow. (The second keeps the client reading.)
		b := wire.AppendStreamClose(nil, ids[0], 0, "", nil)
		b, res.sent = crossingMessages(b, ids[0], peer.Settings, 7)
		res.window = peer.Settings.ConnWindow()
		if _, err := c.Write(b); err != nil {
			res.err = err
			return
		}
		res.granted, res.err = grantedUntilPong(r, 7)
	}()
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := ctxT(t)
	for range 2 {
		if _, err := cli.NewStream(ctx, &desc, 0); err != nil {
			t.Fatal(err)
		}
	}
	res := <-done
	if res.err != nil || res.granted < res.sent-res.window/4 {
		t.Fatalf("the client granted %d bytes back of the %d that the messages of a closed stream cost (%v)", res.granted, res.sent, res.err)
	}
}
