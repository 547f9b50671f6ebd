package otel_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/rt"
)

// feed serves the three streams of feed.Feed, writing the id of the span
// in the handler's context into what it sends:
//   - Publish counts the events it receives;
//   - Subscribe sends From events of the topic; topic "notfound" fails
//     with NotFound before any, "fail" with Unavailable after one; with
//     Follow it then waits for the stream's end and returns its error;
//     "panic" panics after one;
//   - Chat echoes every line, and fails with Internal on the text "fail".
type feed struct {
	feedrpc.UnimplementedFeedServer
}

func spanID(ctx context.Context) string { return trace.SpanContextFromContext(ctx).SpanID().String() }

func (feed) Publish(s rt.ClientStreamingServer[feedrpc.Event, feedrpc.Published]) error {
	var n int64
	for {
		_, err := s.Recv()
		if err == io.EOF {
			return s.SendAndClose(&feedrpc.Published{Count: n, LastSeq: n})
		}
		if err != nil {
			return err
		}
		n++
	}
}

func (feed) Subscribe(req *feedrpc.Subscription, s rt.ServerStreamingServer[feedrpc.Event]) error {
	switch req.Topic {
	case "notfound":
		return rt.Errorf(rt.NotFound, "no topic %q", req.Topic)
	case "fail":
		if err := s.Send(&feedrpc.Event{Topic: req.Topic, Seq: 1, Text: spanID(s.Context())}); err != nil {
			return err
		}
		return rt.Errorf(rt.Unavailable, "topic %q is gone", req.Topic)
	case "panic":
		if err := s.Send(&feedrpc.Event{Topic: req.Topic, Seq: 1, Text: spanID(s.Context())}); err != nil {
			return err
		}
		panic("feed panicked")
	}
	for i := range req.From {
		if err := s.Send(&feedrpc.Event{Topic: req.Topic, Seq: i + 1, Text: spanID(s.Context())}); err != nil {
			return err
		}
	}
	if req.Follow {
		<-s.Context().Done()
		return s.Context().Err()
	}
	return nil
}

func (feed) Chat(s rt.BidiStreamingServer[feedrpc.Line, feedrpc.Line]) error {
	for {
		l, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if l.Text == "fail" {
			return rt.Errorf(rt.Internal, "chat broke")
		}
		if err := s.Send(&feedrpc.Line{From: spanID(s.Context()), Text: l.Text}); err != nil {
			return err
		}
	}
}

// startFeed serves feed with the stream server interceptor and returns a
// client with the stream client interceptor, both on tel.
func startFeed(t *testing.T, tel telemetry) *feedrpc.FeedClient {
	cli, _ := serve(t, []rt.ServerOption{rt.WithStreamServerInterceptors(yotel.NewStreamServerInterceptor(tel.options("")))},
		func(srv *rt.Server) { feedrpc.RegisterFeed(srv, feed{}) },
		func(string) []rt.ClientOption {
			return []rt.ClientOption{rt.WithStreamClientInterceptors(yotel.NewStreamClientInterceptor(tel.options("")))}
		})
	return feedrpc.NewFeedClient(cli)
}

// waitSpans waits, for at most 10 s, until tel has ended client and server
// spans of kind Client and Server, and returns the first of each.
func waitSpans(t *testing.T, tel telemetry, client, server int) (sdktrace.ReadOnlySpan, sdktrace.ReadOnlySpan) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, ss := tel.spansOf(trace.SpanKindClient), tel.spansOf(trace.SpanKindServer)
		if len(cs) >= client && len(ss) >= server {
			if len(cs) != client || len(ss) != server {
				t.Fatalf("got %d client and %d server spans, want %d and %d", len(cs), len(ss), client, server)
			}
			var c, s sdktrace.ReadOnlySpan
			if client > 0 {
				c = cs[0]
			}
			if server > 0 {
				s = ss[0]
			}
			return c, s
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, %d client and %d server spans, want %d and %d", len(cs), len(ss), client, server)
		}
		time.Sleep(time.Millisecond)
	}
}

// messages returns the rpc.message.type of s's message events in order,
// "SENT" or "RECEIVED", and reports any event whose rpc.message.id is not
// one more than the last of its type.
func messages(t *testing.T, what string, s sdktrace.ReadOnlySpan) []string {
	t.Helper()
	var out []string
	last := map[string]int64{}
	for _, ev := range s.Events() {
		if ev.Name != "rpc.message" {
			continue
		}
		var typ string
		var id, size int64 = -1, -1
		for _, kv := range ev.Attributes {
			switch kv.Key {
			case "rpc.message.type":
				typ = kv.Value.AsString()
			case "rpc.message.id":
				id = kv.Value.AsInt64()
			case "rpc.message.uncompressed_size":
				size = kv.Value.AsInt64()
			}
		}
		if id != last[typ]+1 || size < 0 {
			t.Errorf("%s span: %s message id %d after %d, size %d", what, typ, id, last[typ], size)
		}
		last[typ] = id
		out = append(out, typ)
	}
	return out
}

// count returns how many of types are typ.
func count(types []string, typ string) int {
	n := 0
	for _, t := range types {
		if t == typ {
			n++
		}
	}
	return n
}

func TestStreamE2E(t *testing.T) {
	tel := newTelemetry()
	cli := startFeed(t, tel)

	tests := []struct {
		name         string
		method       string
		run          func(ctx context.Context) (serverSpans []string, err error) // the span ids the handler sent
		code         string
		clientFailed bool
		serverFailed bool
		sent, recv   int // messages the client sent and received
	}{
		{name: "server stream", method: "feed.Feed/Subscribe", code: "OK", sent: 1, recv: 3,
			run: func(ctx context.Context) ([]string, error) {
				s, err := cli.Subscribe(ctx, &feedrpc.Subscription{Topic: "t", From: 3})
				if err != nil {
					return nil, err
				}
				return recvEvents(s)
			}},
		{name: "server stream fails", method: "feed.Feed/Subscribe", code: "UNAVAILABLE", clientFailed: true, serverFailed: true, sent: 1, recv: 1,
			run: func(ctx context.Context) ([]string, error) {
				s, err := cli.Subscribe(ctx, &feedrpc.Subscription{Topic: "fail"})
				if err != nil {
					return nil, err
				}
				return recvEvents(s)
			}},
		{name: "server stream not found", method: "feed.Feed/Subscribe", code: "NOT_FOUND", clientFailed: true, sent: 1,
			run: func(ctx context.Context) ([]string, error) {
				s, err := cli.Subscribe(ctx, &feedrpc.Subscription{Topic: "notfound"})
				if err != nil {
					return nil, err
				}
				return recvEvents(s)
			}},
		{name: "client stream", method: "feed.Feed/Publish", code: "OK", sent: 4, recv: 1,
			run: func(ctx context.Context) ([]string, error) {
				s, err := cli.Publish(ctx)
				if err != nil {
					return nil, err
				}
				for range 4 {
					if err := s.Send(&feedrpc.Event{Topic: "t", Text: "x"}); err != nil {
						return nil, err
					}
				}
				p, err := s.CloseAndRecv()
				if err == nil && p.Count != 4 {
					t.Errorf("published %d events, want 4", p.Count)
				}
				return nil, err
			}},
		{name: "bidi stream", method: "feed.Feed/Chat", code: "OK", sent: 3, recv: 3,
			run: func(ctx context.Context) ([]string, error) { return chat(ctx, cli, "a", "b", "c") }},
		{name: "bidi stream fails", method: "feed.Feed/Chat", code: "INTERNAL", clientFailed: true, serverFailed: true, sent: 2, recv: 1,
			run: func(ctx context.Context) ([]string, error) { return chat(ctx, cli, "a", "fail") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel.spans.Reset()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx, parent := tel.tp.Tracer("test").Start(ctx, "parent")
			seen, err := tt.run(ctx)
			parent.End()
			cancel() // the stream is over: this must not change its span
			if got := yotel.StatusName(rt.CodeOf(err)); got != tt.code {
				t.Fatalf("stream ended with %v, want code %s", err, tt.code)
			}
			c, s := waitSpans(t, tel, 1, 1)
			checkLinks(t, parent, c, s, tt.method)
			for _, id := range seen {
				if id != s.SpanContext().SpanID().String() {
					t.Errorf("handler's context has span %s, want its server span %s", id, s.SpanContext().SpanID())
				}
			}
			common := map[attribute.Key]any{"rpc.system.name": "yrpc", "rpc.method": tt.method, "rpc.response.status_code": tt.code}
			cw := map[attribute.Key]any{"server.address": "feed.Feed", "network.peer.address": "127.0.0.1"}
			sw := map[attribute.Key]any{"network.peer.address": "127.0.0.1"}
			for k, v := range common {
				cw[k], sw[k] = v, v
			}
			checkSide(t, "client", c, cw, tt.clientFailed, tt.code)
			checkSide(t, "server", s, sw, tt.serverFailed, tt.code, "server.address")
			checkMessages(t, c, s, tt.sent, tt.recv)
		})
	}

	// One duration per stream on each side, by method and code.
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for _, tt := range tests {
		want[tt.method+" "+tt.code]++
	}
	for _, name := range []string{"rpc.client.call.duration", "rpc.server.call.duration"} {
		got := durationCounts(t, rm, name)
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: %d points for %s, want %d (all: %v)", name, got[k], k, n, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: points %v, want %v", name, got, want)
		}
	}
}

// recvEvents reads a server stream to its end and returns the span ids
// its events carry.
func recvEvents(s rt.ServerStreamingClient[feedrpc.Event]) ([]string, error) {
	var ids []string
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return ids, err
		}
		ids = append(ids, ev.Text)
	}
}

// chat sends each line and receives its echo, then half-closes and reads
// to the end; it returns the span ids the echoes carry.
func chat(ctx context.Context, cli *feedrpc.FeedClient, lines ...string) ([]string, error) {
	s, err := cli.Chat(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, l := range lines {
		if err := s.Send(&feedrpc.Line{Text: l}); err != nil {
			return ids, err
		}
		echo, err := s.Recv()
		if err != nil {
			return ids, err
		}
		ids = append(ids, echo.From)
	}
	if err := s.CloseSend(); err != nil {
		return ids, err
	}
	if _, err := s.Recv(); err != io.EOF {
		return ids, err
	}
	return ids, nil
}

// checkLinks checks the spans' names and that the client span c is
// parent's child and the server span s the client span's, in one trace.
func checkLinks(t *testing.T, parent trace.Span, c, s sdktrace.ReadOnlySpan, method string) {
	t.Helper()
	for _, sp := range []sdktrace.ReadOnlySpan{c, s} {
		if sp.Name() != method {
			t.Errorf("%s span name = %q, want %s", sp.SpanKind(), sp.Name(), method)
		}
		if sp.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("%s span trace = %s, want the caller's %s", sp.SpanKind(), sp.SpanContext().TraceID(), parent.SpanContext().TraceID())
		}
	}
	if c.Parent().SpanID() != parent.SpanContext().SpanID() || c.Parent().IsRemote() {
		t.Errorf("client span parent = %s (remote %v), want the caller's span %s", c.Parent().SpanID(), c.Parent().IsRemote(), parent.SpanContext().SpanID())
	}
	if s.Parent().SpanID() != c.SpanContext().SpanID() || !s.Parent().IsRemote() {
		t.Errorf("server span parent = %s (remote %v), want the client span %s, remote", s.Parent().SpanID(), s.Parent().IsRemote(), c.SpanContext().SpanID())
	}
}

// checkMessages checks the message events: the client sent sent and
// received recv messages, and the server the other way round.
func checkMessages(t *testing.T, c, s sdktrace.ReadOnlySpan, sent, recv int) {
	t.Helper()
	cm, sm := messages(t, "client", c), messages(t, "server", s)
	if count(cm, "SENT") != sent || count(cm, "RECEIVED") != recv || len(cm) != sent+recv {
		t.Errorf("client message events %v, want %d SENT and %d RECEIVED", cm, sent, recv)
	}
	if count(sm, "RECEIVED") != sent || count(sm, "SENT") != recv || len(sm) != sent+recv {
		t.Errorf("server message events %v, want %d RECEIVED and %d SENT", sm, sent, recv)
	}
}

// durationCounts returns the number of durations histogram name holds by
// "method code".
func durationCounts(t *testing.T, rm metricdata.ResourceMetrics, name string) map[string]uint64 {
	t.Helper()
	m, ok := findMetric(rm, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
	}
	counts := map[string]uint64{}
	for _, dp := range h.DataPoints {
		method, _ := dp.Attributes.Value("rpc.method")
		code, _ := dp.Attributes.Value("rpc.response.status_code")
		counts[method.AsString()+" "+code.AsString()] += dp.Count
	}
	return counts
}

// TestStreamEnd checks the status of streams that end other than by
// reading to io.EOF: canceled while idle or while a Recv waits, past their
// deadline, and by a send the stream cannot take.
func TestStreamEnd(t *testing.T) {
	tel := newTelemetry()
	cli := startFeed(t, tel)
	// follow opens a Subscribe that keeps going and receives its first event.
	follow := func(t *testing.T, ctx context.Context) rt.ServerStreamingClient[feedrpc.Event] {
		s, err := cli.Subscribe(ctx, &feedrpc.Subscription{Topic: "t", From: 1, Follow: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name       string
		run        func(t *testing.T) // ends the stream
		code       string             // the client span's status
		serverCode string             // the server span's; "" when the race with the client decides it
		sent, recv int
	}{
		{name: "canceled idle", code: "CANCELLED", serverCode: "CANCELLED", sent: 1, recv: 1,
			run: func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				follow(t, ctx)
				cancel() // nobody reads: the span ends by the context
			}},
		{name: "canceled while receiving", code: "CANCELLED", serverCode: "CANCELLED", sent: 1, recv: 1,
			run: func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				s := follow(t, ctx)
				got := make(chan error, 1)
				go func() {
					_, err := s.Recv()
					got <- err
				}()
				cancel()
				if err := <-got; rt.CodeOf(err) != rt.Canceled {
					t.Errorf("Recv after cancel = %v, want Canceled", err)
				}
			}},
		{name: "deadline", code: "DEADLINE_EXCEEDED", sent: 1, recv: 1,
			run: func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				s := follow(t, ctx)
				if _, err := s.Recv(); rt.CodeOf(err) != rt.DeadlineExceeded {
					t.Errorf("Recv past the deadline = %v, want DeadlineExceeded", err)
				}
			}},
		{name: "send too large", code: "RESOURCE_EXHAUSTED", serverCode: "RESOURCE_EXHAUSTED", sent: 1,
			run: func(t *testing.T) {
				s, err := cli.Publish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Send(&feedrpc.Event{Topic: "t", Text: "x"}); err != nil {
					t.Fatal(err)
				}
				// Over Publish's 4 KiB limit: the stream ends, nobody reads.
				big := &feedrpc.Event{Topic: "t", Text: strings.Repeat("x", 5000)}
				if err := s.Send(big); rt.CodeOf(err) != rt.ResourceExhausted {
					t.Errorf("Send of 5000 bytes = %v, want ResourceExhausted", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel.spans.Reset()
			tt.run(t)
			c, s := waitSpans(t, tel, 1, 1)
			if got := attrs(c)["rpc.response.status_code"].AsString(); got != tt.code {
				t.Errorf("client span status code %s, want %s", got, tt.code)
			}
			if c.Status().Code != codes.Error {
				t.Errorf("client span status %+v, want Error", c.Status())
			}
			if tt.serverCode != "" {
				if got := attrs(s)["rpc.response.status_code"].AsString(); got != tt.serverCode {
					t.Errorf("server span status code %s, want %s", got, tt.serverCode)
				}
			}
			if s.Parent().SpanID() != c.SpanContext().SpanID() {
				t.Errorf("server span's parent %s is not the client span %s", s.Parent().SpanID(), c.SpanContext().SpanID())
			}
			// However it ended, the stream's try is reported before its
			// span ends: the span names the provider.
			if got := attrs(c)["network.peer.address"].AsString(); got != "127.0.0.1" {
				t.Errorf("client span's network.peer.address %q, want 127.0.0.1", got)
			}
			checkMessages(t, c, s, tt.sent, tt.recv)
		})
	}
}
