package rt_test

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
)

// aliasMsg decodes as generated messages do: Unmarshal makes one private
// copy of its input and UnmarshalOwned none, the string sharing the bytes.
type aliasMsg struct{ S string }

func (m *aliasMsg) Size() int                     { return len(m.S) }
func (m *aliasMsg) MarshalAppend(b []byte) []byte { return append(b, m.S...) }
func (m *aliasMsg) UnmarshalOwned(b []byte) error { m.S = codec.String(b); return nil }
func (m *aliasMsg) Unmarshal(b []byte) error {
	if len(b) == 0 {
		*m = aliasMsg{}
		return nil
	}
	return m.UnmarshalOwned(append([]byte(nil), b...))
}

// aliasDesc is a service whose handler answers with its request, as the
// bench's does.
var aliasDesc = rt.ServiceDesc{
	Name: "test.Alias",
	Methods: []rt.MethodDesc{{
		Name: "Echo", FullName: "test.Alias/Echo", ID: 0x2001,
		NewRequest:          func() rt.Message { return new(aliasMsg) },
		NewResponse:         func() rt.Message { return new(aliasMsg) },
		NewResponseWithRoom: rt.WithRoom[aliasMsg],
		Handle: func(_ any, _ context.Context, req rt.Message) (rt.Message, error) {
			return req, nil
		},
	}},
	MethodIndex: func(id uint32) int {
		if id == 0x2001 {
			return 0
		}
		return -1
	},
}

// wantAllocs is what a call costs with the default options, client and
// server in one process, when the caller reuses its response message or
// has the call make it (rt.InvokeNew, as generated XxxClient methods do):
// the client copies the response's bytes (which the response keeps), in
// the second case into room allocated with the new message; the
// server makes the request message and the call's record (with the
// handler's context), which holds the copy of the request's bytes (up to
// 4.5 KiB, for messages that implement rt.OwnedUnmarshaler as generated
// ones do). The write buffers and the interrupt of a caller's context are
// reused; WithRequestReuse saves the request message.
const wantAllocs = 3

// aliasEnv serves desc (aliasDesc when nil) and returns a client of it.
func aliasEnv(t testing.TB, desc *rt.ServiceDesc, opts ...rt.ServerOption) *rt.Client {
	return aliasClient(t, aliasServe(t, desc, opts...))
}

// aliasServe serves desc (aliasDesc when nil) and returns its address.
func aliasServe(t testing.TB, desc *rt.ServiceDesc, opts ...rt.ServerOption) string {
	if desc == nil {
		desc = &aliasDesc
	}
	srv := rt.NewServer(opts...)
	srv.RegisterService(desc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background(), lis)
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}

// aliasClient returns a client of addr.
func aliasClient(t testing.TB, addr string, opts ...rt.ClientOption) *rt.Client {
	cli, err := rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// TestCallAllocs counts the allocations of calls made one at a time, with
// a context that cannot end and with one that can (the caller that reads
// its own answer registers an interrupt with it), with the default
// options and with WithRequestReuse(true), whose handler answers with the
// request it is given (which is reset only once the answer is written).
func TestCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under the race detector")
	}
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		reuse bool
		want  float64
	}{
		{"background", context.Background(), false, wantAllocs},
		{"cancelable", cancelable, false, wantAllocs},
		{"background/reuse", context.Background(), true, wantAllocs - 1},
		{"cancelable/reuse", cancelable, true, wantAllocs - 1},
		{"background/new", context.Background(), false, wantAllocs},
		{"cancelable/new", cancelable, false, wantAllocs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli := aliasEnv(t, nil, rt.WithRequestReuse(tc.reuse))
			req := &aliasMsg{S: strings.Repeat("x", 581)}
			invoke := aliasInvoker(cli, strings.HasSuffix(tc.name, "/new"))
			n := testing.AllocsPerRun(2000, func() {
				if resp, err := invoke(tc.ctx, req); err != nil || resp.S != req.S {
					t.Fatalf("call: %v, %d bytes back", err, len(resp.S))
				}
			})
			t.Logf("%v allocs per call", n)
			if n > tc.want {
				t.Errorf("%v allocations per call, want at most %v", n, tc.want)
			}
		})
	}
}

// aliasInvoker returns a func that calls aliasDesc's method with cli: by
// InvokeNew when fresh, else by Invoke into a response it reuses.
func aliasInvoker(cli *rt.Client, fresh bool) func(context.Context, *aliasMsg, ...rt.CallOption) (*aliasMsg, error) {
	if fresh {
		return func(ctx context.Context, req *aliasMsg, opts ...rt.CallOption) (*aliasMsg, error) {
			resp, err := rt.InvokeNew(ctx, cli, &aliasDesc, 0, req, opts...)
			if err != nil {
				return nil, err
			}
			return resp.(*aliasMsg), nil
		}
	}
	resp := new(aliasMsg)
	return func(ctx context.Context, req *aliasMsg, opts ...rt.CallOption) (*aliasMsg, error) {
		return resp, cli.Invoke(ctx, &aliasDesc, 0, req, resp, opts...)
	}
}

// TestCallAllocsParallel counts them with 16 callers sharing the client,
// where responses are read by the connection's goroutine and requests
// answered in batches; half the callers reuse their response messages.
func TestCallAllocsParallel(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under the race detector")
	}
	cli := aliasEnv(t, nil)
	const callers, calls = 16, 1000
	run := func() {
		var wg sync.WaitGroup
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := &aliasMsg{S: strings.Repeat("x", 581)}
				invoke := aliasInvoker(cli, i%2 == 1)
				for range calls {
					if _, err := invoke(context.Background(), req); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	run() // warm up: connections, pools, workers
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run()
	runtime.ReadMemStats(&after)
	// The callers' goroutines and their requests, and the odd goroutine
	// the client or server starts, are allowed a little over the count.
	n := float64(after.Mallocs-before.Mallocs) / (callers * calls)
	t.Logf("%.3f allocs per call", n)
	if n > wantAllocs+0.2 {
		t.Errorf("%.2f allocations per call, want at most %d", n, wantAllocs)
	}
}

// TestRequestsKept: by default each request is a message of its own, so
// a handler may keep the requests it is given.
func TestRequestsKept(t *testing.T) {
	var kept []*aliasMsg
	var mu sync.Mutex
	desc := aliasDesc
	desc.Methods = slices.Clone(aliasDesc.Methods)
	desc.Methods[0].Handle = func(_ any, _ context.Context, req rt.Message) (rt.Message, error) {
		mu.Lock()
		kept = append(kept, req.(*aliasMsg))
		mu.Unlock()
		return &aliasMsg{S: "ok"}, nil
	}
	cli := aliasEnv(t, &desc)
	const calls = 200
	for i := range calls {
		if err := cli.Invoke(context.Background(), &desc, 0, &aliasMsg{S: strconv.Itoa(i)}, new(aliasMsg)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kept) != calls {
		t.Fatalf("%d requests kept, want %d", len(kept), calls)
	}
	for i, m := range kept {
		if m.S != strconv.Itoa(i) {
			t.Fatalf("kept request %d holds %q", i, m.S)
		}
	}
}

// The server's access log formats each call's record but allocates
// nothing for it: the client's address is formatted once per connection,
// not per call (it cost 3 allocations per call).
func TestAccessLogAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under the race detector")
	}
	allocs := func(opts ...rt.ServerOption) float64 {
		cli := aliasEnv(t, nil, opts...)
		req, resp := &aliasMsg{S: strings.Repeat("x", 581)}, new(aliasMsg)
		return testing.AllocsPerRun(1000, func() {
			if err := cli.Invoke(context.Background(), &aliasDesc, 0, req, resp); err != nil {
				t.Fatal(err)
			}
		})
	}
	var lines lineCounter
	plain := allocs()
	logged := allocs(rt.WithServerInterceptors(rt.ServerAccessLog(slog.New(slog.NewTextHandler(&lines, nil)))))
	if lines.n.Load() < 1000 {
		t.Fatalf("%d access log lines for 1,001 calls", lines.n.Load())
	}
	if logged > plain {
		t.Errorf("%v allocations per call with the access log, %v without", logged, plain)
	}
}

// A static bearer token costs the client no allocation per call: its
// metadata is made once, when the client is. (It cost 2: the metadata
// and the "Bearer …" value.) The server still parses the metadata it
// receives: 3 allocations, the slice and the pair's two strings.
func TestBearerTokenAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under the race detector")
	}
	addr := aliasServe(t, nil)
	req, resp := &aliasMsg{S: strings.Repeat("x", 581)}, new(aliasMsg)
	allocs := func(cli *rt.Client) float64 {
		return testing.AllocsPerRun(1000, func() {
			if err := cli.Invoke(context.Background(), &aliasDesc, 0, req, resp); err != nil {
				t.Fatal(err)
			}
		})
	}
	plain := allocs(aliasClient(t, addr))
	token := allocs(aliasClient(t, addr, rt.WithCredentials(rt.BearerToken{Token: "secret", AllowPlaintext: true})))
	const serverParse = 3
	if token > plain+serverParse {
		t.Errorf("%v allocations per call with a bearer token, %v without: the client allocates %v per call for it", token, plain, token-plain-serverParse)
	}
}

// TestForkedCallAllocs counts the allocations of a call forked to two
// providers: the call keeps its race's attempts, their connection
// records and the race's state for its next race (41 allocations per
// call with Invoke, 38 with InvokeNew, when each race made them anew;
// 24 and 22 since, the rest mostly the race's context, goroutines, the
// answers, and Invoke's copy of the winner's into the caller's message).
func TestForkedCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops values at random under the race detector")
	}
	cli, err := rt.NewClient(rt.WithAddrs(aliasServe(t, nil), aliasServe(t, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	req := &aliasMsg{S: strings.Repeat("x", 581)}
	for _, fresh := range []bool{false, true} {
		invoke := aliasInvoker(cli, fresh)
		ctx := context.Background()
		n := testing.AllocsPerRun(2000, func() {
			if resp, err := invoke(ctx, req, rt.WithFaultMode(rt.FaultForking)); err != nil || resp.S != req.S {
				t.Fatalf("forked call: %v", err)
			}
		})
		t.Logf("InvokeNew %v: %v allocs per forked call", fresh, n)
		if n > 26 {
			t.Errorf("InvokeNew %v: %v allocations per forked call, want at most 26", fresh, n)
		}
	}
}
