// Command feed shows yrpc's three kinds of streams with the generated API
// of a small topic feed (schema in ./schema, generated code in ./feedrpc):
// a live subscription (server stream) that receives what a publication
// (client stream) appends, a replay of a topic that ends with io.EOF and
// a trailer, and a chat (bidi stream). Server and client run in one
// process, over loopback TCP.
//
//	go run ./examples/feed
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/rt"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		err = run(ctx, os.Stdout, lis, rt.WithAddrs(lis.Addr().String()))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "feed:", err)
		os.Exit(1)
	}
}

// run serves the feed on lis, calls it through a client made with opts
// and prints what the client sees to out.
func run(ctx context.Context, out io.Writer, lis net.Listener, opts ...rt.ClientOption) error {
	srv := rt.NewServer()
	feedrpc.RegisterFeed(srv, newHub())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	defer func() {
		srv.Shutdown(ctx)
		<-served
	}()
	cli, err := rt.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cli.Close()
	return tell(ctx, out, feedrpc.NewFeedClient(cli))
}

// tell is the client's side: subscribe, publish, replay, chat.
func tell(ctx context.Context, out io.Writer, feed *feedrpc.FeedClient) error {
	// A live subscription: Subscribe sends the request and half-closes;
	// the events come as they are published.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	live, err := feed.Subscribe(sctx, &feedrpc.Subscription{Topic: "news", Follow: true})
	if err != nil {
		return err
	}

	// A publication: a stream of events, then one answer.
	pub, err := feed.Publish(ctx)
	if err != nil {
		return err
	}
	for _, text := range []string{"streams are here", "flow control keeps memory bounded", "cancel reaches the server"} {
		if err := pub.Send(&feedrpc.Event{Topic: "news", Text: text}); err != nil {
			return err
		}
	}
	res, err := pub.CloseAndRecv()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "published %d events, last seq %d\n", res.Count, res.LastSeq)

	for range res.Count {
		e, err := live.Recv()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "live   %s #%d: %s\n", e.Topic, e.Seq, e.Text)
	}
	stop() // canceling the context ends the subscription on both sides
	_, err = live.Recv()
	fmt.Fprintf(out, "live subscription ended: %v\n", rt.CodeOf(err))

	// A replay: the stream ends with io.EOF and the server's trailer.
	replay, err := feed.Subscribe(ctx, &feedrpc.Subscription{Topic: "news", From: 2})
	if err != nil {
		return err
	}
	for {
		e, err := replay.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "replay %s #%d: %s\n", e.Topic, e.Seq, e.Text)
	}
	fmt.Fprintf(out, "replay ended: io.EOF, trailer sent=%s\n", replay.Trailer().Get("sent"))

	// A chat: Send and Recv on two goroutines.
	chat, err := feed.Chat(ctx)
	if err != nil {
		return err
	}
	sent := make(chan error, 1)
	go func() {
		for _, text := range []string{"hello", "how are the streams?"} {
			if err := chat.Send(&feedrpc.Line{From: "client", Text: text}); err != nil {
				sent <- err
				return
			}
		}
		sent <- chat.CloseSend()
	}()
	for {
		l, err := chat.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "chat   %s: %s\n", l.From, l.Text)
	}
	return <-sent
}

// hub implements feedrpc.FeedServer: topics of events in memory.
type hub struct {
	feedrpc.UnimplementedFeedServer
	mu      sync.Mutex
	topics  map[string][]*feedrpc.Event
	changed chan struct{} // closed and replaced when events are appended
}

func newHub() *hub { return &hub{topics: map[string][]*feedrpc.Event{}, changed: make(chan struct{})} }

func (h *hub) Publish(s rt.ClientStreamingServer[feedrpc.Event, feedrpc.Published]) error {
	res := &feedrpc.Published{}
	for {
		e, err := s.Recv()
		if err == io.EOF {
			return s.SendAndClose(res)
		}
		if err != nil {
			return err
		}
		h.mu.Lock()
		e.Seq = int64(len(h.topics[e.Topic]) + 1)
		h.topics[e.Topic] = append(h.topics[e.Topic], e)
		close(h.changed)
		h.changed = make(chan struct{})
		h.mu.Unlock()
		res.Count++
		res.LastSeq = e.Seq
	}
}

func (h *hub) Subscribe(req *feedrpc.Subscription, s rt.ServerStreamingServer[feedrpc.Event]) error {
	next := max(req.From, 1)
	sent := 0
	for {
		h.mu.Lock()
		var events []*feedrpc.Event
		if all := h.topics[req.Topic]; int(next) <= len(all) {
			events = all[next-1:]
		}
		changed := h.changed
		h.mu.Unlock()
		for _, e := range events {
			if err := s.Send(e); err != nil {
				return err
			}
			next++
			sent++
		}
		if !req.Follow {
			s.SetTrailer(rt.MD{"sent", strconv.Itoa(sent)})
			return nil
		}
		select {
		case <-changed:
		case <-s.Context().Done():
			return s.Context().Err()
		}
	}
}

func (h *hub) Chat(s rt.BidiStreamingServer[feedrpc.Line, feedrpc.Line]) error {
	for {
		l, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Send(&feedrpc.Line{From: "server", Text: strings.ToUpper(l.Text)}); err != nil {
			return err
		}
	}
}
