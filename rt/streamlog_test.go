package rt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// boomDesc has a stream method whose handler panics.
var boomDesc = rt.ServiceDesc{
	Name: "test.Boom",
	Methods: []rt.MethodDesc{{
		Name: "Boom", FullName: "test.Boom/Boom", ID: 0x3001, Stream: rt.ServerStreaming,
		NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) },
		HandleStream: func(any, rt.ServerStreamer) error { panic("boom") },
	}},
	MethodIndex: func(id uint32) int {
		if id == 0x3001 {
			return 0
		}
		return -1
	},
}

// streamLines is an access log that keeps its lines.
type streamLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *streamLines) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(lockedWriter{&s.buf, &s.mu}, nil))
}

// take returns the lines logged so far as "side method code sent/received"
// (side "server" for lines with a peer), and for client lines with
// " tries=N provider=P" (P for a loopback provider, with or without a
// grpc:// scheme), sorted, and forgets them; it fails t on a line without
// a latency, or a server line without a peer address.
func (s *streamLines) take(t *testing.T) []string {
	t.Helper()
	s.mu.Lock()
	text := s.buf.String()
	s.buf.Reset()
	s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l == "" {
			continue
		}
		var r struct {
			Msg, Method, Code, Peer, Provider string
			Latency                           *int64
			Sent, Received                    int64
			Tries                             int
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		side := "client"
		if strings.Contains(l, `"peer"`) {
			side = "server"
			if !strings.HasPrefix(r.Peer, "127.0.0.1:") {
				t.Errorf("server line without the peer's address: %s", l)
			}
		}
		if r.Msg != "rt: stream" || r.Latency == nil {
			t.Errorf("line %s: want msg \"rt: stream\" and a latency", l)
		}
		line := fmt.Sprintf("%s %s %s %d/%d", side, r.Method, r.Code, r.Sent, r.Received)
		if side == "client" {
			p := strings.TrimPrefix(r.Provider, "grpc://")
			if strings.HasPrefix(p, "127.0.0.1:") {
				p = "P"
			}
			line += fmt.Sprintf(" tries=%d provider=%s", r.Tries, p)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// A stream gets one access-log line on each side when it ends, with its
// method, code, latency and messages sent and received (and the peer on
// the server), over yrpc's wire and over gRPC alike: read to its end,
// failed by the handler, canceled by the caller, failed to open, or
// ended by a handler's panic.
func TestStreamAccessLogs(t *testing.T) {
	var lines streamLines
	l := lines.logger()
	e := newGRPCEnvWith(t, func(srv *rt.Server) { srv.RegisterService(&boomDesc, struct{}{}) },
		rt.WithStreamServerInterceptors(rt.StreamServerAccessLog(l)),
		rt.WithLogger(slog.New(slog.DiscardHandler))) // not the panic's error record

	clients := map[string]*rt.Client{
		"yrpc": grpcCli(t, rt.WithAddrs(e.addr), rt.WithStreamClientInterceptors(rt.StreamClientAccessLog(l))),
		"grpc": grpcCli(t, rt.WithAddrs("grpc://"+e.addr), rt.WithStreamClientInterceptors(rt.StreamClientAccessLog(l))),
	}
	const list, chat = "grpctest.Probe/List", "grpctest.Probe/Chat"
	tests := []struct {
		name string
		run  func(ctx context.Context, cli *rt.Client) error
		want []string // sorted; path.Match patterns
	}{
		{"read to the end", func(ctx context.Context, cli *rt.Client) error {
			return readToEnd(openProbe(ctx, cli, 5, "3"))
		}, []string{"client " + list + " OK 1/3 tries=1 provider=P", "server " + list + " OK 3/1"}},
		{"failed by the handler", func(ctx context.Context, cli *rt.Client) error {
			if err := readToEnd(openProbe(ctx, cli, 5, "2:fail")); rt.CodeOf(err) != rt.Aborted {
				return fmt.Errorf("got %v, want Aborted", err)
			}
			return nil
		}, []string{"client " + list + " Aborted 1/2 tries=1 provider=P", "server " + list + " Aborted 2/1"}},
		{"bidi", func(ctx context.Context, cli *rt.Client) error {
			cs, err := cli.NewStream(ctx, &probeDesc, 7)
			if err != nil {
				return err
			}
			for _, m := range []string{"a", "b"} {
				if err := cs.SendMsg(&msg{S: m}); err != nil {
					return err
				}
				if err := cs.RecvMsg(new(msg)); err != nil {
					return err
				}
			}
			if err := cs.CloseSend(); err != nil {
				return err
			}
			return readToEnd(cs, nil)
		}, []string{"client " + chat + " OK 2/2 tries=1 provider=P", "server " + chat + " OK 2/2"}},
		{"canceled by the caller", func(ctx context.Context, cli *rt.Client) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			cs, err := cli.NewStream(ctx, &probeDesc, 7)
			if err != nil {
				return err
			}
			if err := cs.SendMsg(&msg{S: "a"}); err != nil {
				return err
			}
			if err := cs.RecvMsg(new(msg)); err != nil {
				return err
			}
			// The server's line may count no message sent: its SendMsg
			// of the one the client got may still wait on its write
			// when the cancel ends it (over HTTP/2).
			cancel()
			return nil
		}, []string{"client " + chat + " Canceled 1/1 tries=1 provider=P", "server " + chat + " Canceled */1"}},
		{"failed to open", func(ctx context.Context, cli *rt.Client) error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := cli.NewStream(ctx, &probeDesc, 5); rt.CodeOf(err) != rt.Canceled {
				return fmt.Errorf("got %v, want Canceled", err)
			}
			return nil
		}, []string{"client " + list + " Canceled 0/0 tries=0 provider="}},
		{"handler panicked", func(ctx context.Context, cli *rt.Client) error {
			cs, err := cli.NewStream(ctx, &boomDesc, 0) // the handler panics before it reads
			if err := readToEnd(cs, err); rt.CodeOf(err) != rt.Internal {
				return fmt.Errorf("got %v, want Internal", err)
			}
			return nil
		}, []string{"client test.Boom/Boom Internal 0/0 tries=1 provider=P", "server test.Boom/Boom Internal 0/0"}},
	}
	for _, proto := range []string{"yrpc", "grpc"} {
		for _, tt := range tests {
			t.Run(proto+"/"+tt.name, func(t *testing.T) {
				if err := tt.run(ctxT(t), clients[proto]); err != nil {
					t.Fatal(err)
				}
				var got []string
				waitUntil(t, func() bool {
					got = append(got, lines.take(t)...)
					return len(got) >= len(tt.want)
				})
				slices.Sort(got)
				if !slices.EqualFunc(got, tt.want, func(g, w string) bool { ok, _ := path.Match(w, g); return ok }) {
					t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			})
		}
	}
}

// openProbe opens method m of grpctest.Probe on cli and sends s, then
// half-closes; its error is for readToEnd.
func openProbe(ctx context.Context, cli *rt.Client, m int, s string) (rt.ClientStreamer, error) {
	cs, err := cli.NewStream(ctx, &probeDesc, m)
	if err != nil {
		return nil, err
	}
	if err := cs.SendMsg(&msg{S: s}); err != nil {
		return cs, err
	}
	return cs, cs.CloseSend()
}

// readToEnd reads cs to its end: nil at io.EOF, else the error (or err, if
// not nil, without reading).
func readToEnd(cs rt.ClientStreamer, err error) error {
	if err != nil {
		return err
	}
	for {
		if err := cs.RecvMsg(new(msg)); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
