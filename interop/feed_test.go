package interop_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/interop"
	"github.com/yrpc/yrpc/interop/feedpb"
	"github.com/yrpc/yrpc/rt"
)

// grpc-go's generated client streams with a yrpc server, over h2c and
// TLS: a server stream ends with its trailer (the handler's and the echoed
// metadata), a client stream's answer comes after CloseSend, a bidi
// stream answers each message before the next is sent, errors and
// Validate's failures end a stream with their codes, and canceling a
// stream reaches the handler.
func TestGRPCGoClientStreams(t *testing.T) {
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			e := start(t, tr)
			c := feedpb.NewFeedClient(e.conn)
			t.Run("server", func(t *testing.T) {
				var trailer metadata.MD
				ctx := metadata.AppendToOutgoingContext(ctxT(t), "echo-tenant", "acme")
				s, err := c.Subscribe(ctx, &feedpb.Subscription{Topic: "t", From: 2}, grpc.Trailer(&trailer))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for {
					ev, err := s.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev.GetText())
				}
				if strings.Join(got, ",") != "event 2,event 3" || strings.Join(trailer["sent"], ",") != "2" || strings.Join(trailer["echo-tenant"], ",") != "acme" {
					t.Errorf("events %q, trailer %v", got, trailer)
				}
			})
			t.Run("client", func(t *testing.T) {
				for _, tc := range []struct {
					texts []string
					topic string
					code  codes.Code
				}{
					{[]string{"a", "b", "c"}, "t", codes.OK},
					{[]string{"a", "fail", "c"}, "t", codes.FailedPrecondition},
					{[]string{"a"}, "", codes.InvalidArgument}, // Validate: a topic is required
				} {
					s, err := c.Publish(ctxT(t))
					if err != nil {
						t.Fatal(err)
					}
					for _, text := range tc.texts {
						if err := s.Send(&feedpb.Event{Topic: tc.topic, Text: text}); err != nil {
							break // the server ended the stream: CloseAndRecv tells how
						}
					}
					res, err := s.CloseAndRecv()
					if status.Code(err) != tc.code || tc.code == codes.OK && (res.GetCount() != 3 || res.GetLastSeq() != 3) {
						t.Errorf("Publish %q to %q: %v, %v; want %v", tc.texts, tc.topic, res, err, tc.code)
					}
				}
			})
			t.Run("bidi", func(t *testing.T) {
				s, err := c.Chat(ctxT(t))
				if err != nil {
					t.Fatal(err)
				}
				for _, text := range []string{"hello", "streams"} {
					if err := s.Send(&feedpb.Line{From: "grpc-go", Text: text}); err != nil {
						t.Fatal(err)
					}
					l, err := s.Recv()
					if err != nil || l.GetText() != strings.ToUpper(text) || l.GetFrom() != "server" {
						t.Fatalf("the answer to %q: %v, %v", text, l, err)
					}
				}
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				if l, err := s.Recv(); !errors.Is(err, io.EOF) {
					t.Errorf("after CloseSend: %v, %v; want io.EOF", l, err)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctxT(t))
				defer cancel()
				s, err := c.Subscribe(ctx, &feedpb.Subscription{Topic: interop.WaitTopic})
				if err != nil {
					t.Fatal(err)
				}
				if ev, err := s.Recv(); err != nil || ev.GetSeq() != 1 {
					t.Fatalf("the first event: %v, %v", ev, err)
				}
				recv(t, e.feed.Waiting)
				cancel()
				if _, err := s.Recv(); status.Code(err) != codes.Canceled {
					t.Errorf("Recv after cancel: %v", err)
				}
				if err := recv(t, e.feed.Ended); !errors.Is(err, context.Canceled) {
					t.Errorf("the handler's context ended with %v, want Canceled", err)
				}
			})
		})
	}
}

// grpcFeed is grpc-go's server of feed.Feed, as interop.Feed behaves
// (its Waiting and Ended channels are grpcUsers'); it also records the
// texts of the lines Chat receives.
type grpcFeed struct {
	feedpb.UnimplementedFeedServer
	users *grpcUsers
}

// echoTrailer sends back the stream's interop.EchoPrefix metadata in its
// trailer.
func echoTrailer(s grpc.ServerStream) {
	md, _ := metadata.FromIncomingContext(s.Context())
	for k, vs := range md {
		if strings.HasPrefix(k, interop.EchoPrefix) {
			s.SetTrailer(metadata.MD{k: vs})
		}
	}
}

func (f *grpcFeed) Publish(s grpc.ClientStreamingServer[feedpb.Event, feedpb.Published]) error {
	echoTrailer(s)
	res := &feedpb.Published{}
	for {
		e, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return s.SendAndClose(res)
		}
		if err != nil {
			return err
		}
		if e.GetText() == "fail" {
			return status.Errorf(codes.FailedPrecondition, "event %d fails", res.Count+1)
		}
		res.Count++
		res.LastSeq = res.Count
	}
}

func (f *grpcFeed) Subscribe(req *feedpb.Subscription, s grpc.ServerStreamingServer[feedpb.Event]) error {
	echoTrailer(s)
	if req.GetTopic() == interop.WaitTopic {
		if err := s.Send(&feedpb.Event{Topic: req.GetTopic(), Seq: 1, Text: "event 1"}); err != nil {
			return err
		}
		f.users.waiting <- struct{}{}
		<-s.Context().Done()
		f.users.ended <- s.Context().Err()
		return s.Context().Err()
	}
	sent := 0
	for seq := max(req.GetFrom(), 1); seq <= 3; seq++ {
		if err := s.Send(&feedpb.Event{Topic: req.GetTopic(), Seq: seq, Text: fmt.Sprintf("event %d", seq)}); err != nil {
			return err
		}
		sent++
	}
	s.SetTrailer(metadata.Pairs("sent", strconv.Itoa(sent)))
	return nil
}

func (f *grpcFeed) Chat(s grpc.BidiStreamingServer[feedpb.Line, feedpb.Line]) error {
	echoTrailer(s)
	for {
		l, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Send(&feedpb.Line{From: "server", Text: strings.ToUpper(l.GetText())}); err != nil {
			return err
		}
	}
}

// A yrpc client (grpc:// and grpcs://, the generated feedrpc client)
// streams with grpc-go's server: the three kinds, trailers, errors,
// cancellation reaching grpc-go's handler, and, with WithCompression,
// gzipped stream messages once a unary call on the connection went
// gzipped.
func TestYRPCClientStreamsGRPCGo(t *testing.T) {
	serverTLS, clientTLS := testTLS(t)
	for _, tc := range []struct {
		name   string
		server *tls.Config
		client []rt.ClientOption
	}{{"h2c", nil, nil}, {"tls", serverTLS, []rt.ClientOption{rt.WithTLS(clientTLS)}}} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGRPCGo(t, tc.server)
			cli, err := rt.NewClient(append(tc.client, rt.WithAddrs(g.url), rt.WithCompression(100))...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cli.Close() })
			c := feedrpc.NewFeedClient(cli)
			t.Run("server", func(t *testing.T) {
				s, err := c.Subscribe(rt.WithMetadata(ctxT(t), "echo-tenant", "acme"), &feedrpc.Subscription{Topic: "t", From: 2})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for {
					ev, err := s.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev.Text)
				}
				if strings.Join(got, ",") != "event 2,event 3" || s.Trailer().Get("sent") != "2" || s.Trailer().Get("echo-tenant") != "acme" {
					t.Errorf("events %q, trailer %q", got, s.Trailer())
				}
			})
			t.Run("client", func(t *testing.T) {
				for _, texts := range [][]string{{"a", "b", "c"}, {"a", "fail", "c"}} {
					s, err := c.Publish(ctxT(t))
					if err != nil {
						t.Fatal(err)
					}
					for _, text := range texts {
						if err := s.Send(&feedrpc.Event{Topic: "t", Text: text}); err != nil {
							break
						}
					}
					res, err := s.CloseAndRecv()
					want := rt.OK
					if texts[1] == "fail" {
						want = rt.FailedPrecondition
					}
					if rt.CodeOf(err) != want || want == rt.OK && (res.Count != 3 || res.LastSeq != 3) {
						t.Errorf("Publish %q: %v, %v; want %v", texts, res, err, want)
					}
				}
			})
			t.Run("bidi", func(t *testing.T) { yrpcChat(t, c, "hello", "streams") })
			t.Run("cancel", func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctxT(t))
				defer cancel()
				s, err := c.Subscribe(ctx, &feedrpc.Subscription{Topic: interop.WaitTopic})
				if err != nil {
					t.Fatal(err)
				}
				if ev, err := s.Recv(); err != nil || ev.Seq != 1 {
					t.Fatalf("the first event: %v, %v", ev, err)
				}
				recv(t, g.users.waiting)
				cancel()
				if _, err := s.Recv(); rt.CodeOf(err) != rt.Canceled {
					t.Errorf("Recv after cancel: %v", err)
				}
				if err := recv(t, g.users.ended); !errors.Is(err, context.Canceled) {
					t.Errorf("grpc-go's handler's context ended with %v, want Canceled", err)
				}
			})
			t.Run("gzip", func(t *testing.T) {
				big := strings.Repeat("compress me ", 1000)
				if _, err := userrpc.NewUsersClient(cli).Echo(ctxT(t), &userrpc.Scalars{Text: big}); err != nil {
					t.Fatal(err)
				}
				recv(t, g.users.got)
				yrpcChat(t, c, big)
				if ok, sizes := g.in.gzipped(false, len(big)); !ok {
					t.Errorf("the line grpc-go received (length, compressed): %d: not gzipped", sizes)
				}
			})
		})
	}
}

// yrpcChat chats texts, one answer per line, then closes.
func yrpcChat(t *testing.T, c *feedrpc.FeedClient, texts ...string) {
	t.Helper()
	s, err := c.Chat(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		if err := s.Send(&feedrpc.Line{From: "yrpc", Text: text}); err != nil {
			t.Fatal(err)
		}
		l, err := s.Recv()
		if err != nil || l.Text != strings.ToUpper(text) || l.From != "server" {
			t.Fatalf("the answer to %d bytes: %v", len(text), err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after CloseSend: %v, want io.EOF", err)
	}
}
