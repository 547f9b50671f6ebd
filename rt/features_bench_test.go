package rt_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/yrpc/yrpc/internal/benchcpu"
	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
)

// featureCase is one set of options BenchmarkFeatures measures.
type featureCase struct {
	name      string
	tls       bool // mutual TLS 1.3
	auth      bool // bearer token, checked by rt.BearerTokens
	accessLog bool // rt.ServerAccessLog to a text handler
}

// lineCounter is an io.Writer that keeps only the count of the lines
// written to it.
type lineCounter struct{ n atomic.Int64 }

func (w *lineCounter) Write(p []byte) (int, error) {
	w.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

// featureEnv serves aliasDesc's echo with fc's options and returns a
// client of it with fc's options and, for fc.accessLog, the writer of the
// log. The handler fails a call that does not come with the TLS state and
// the principal fc's options give it, so that a benchmark's calls
// succeed only when the options did their work.
func featureEnv(b *testing.B, fc featureCase) (*rt.Client, *lineCounter) {
	var sopts []rt.ServerOption
	var copts []rt.ClientOption
	principal := ""
	if fc.tls {
		ca := testcerts.NewCA(b, "bench CA")
		sopts = append(sopts, rt.WithTLS(testcerts.ServerConfig(ca.Issue(b, testcerts.Leaf{CN: "server"}), ca)))
		copts = append(copts, rt.WithTLS(testcerts.ClientConfig(ca, ca.Issue(b, testcerts.Leaf{CN: "bench-client", Client: true}))))
		principal = "bench-client" // the client certificate's common name
	}
	if fc.auth {
		sopts = append(sopts, rt.WithAuthenticator(rt.BearerTokens(map[string]string{"bench-token": "bench-user"})))
		copts = append(copts, rt.WithCredentials(rt.BearerToken{Token: "bench-token", AllowPlaintext: !fc.tls}))
		principal = "bench-user"
	}
	var log *lineCounter
	if fc.accessLog {
		log = new(lineCounter)
		sopts = append(sopts, rt.WithServerInterceptors(rt.ServerAccessLog(slog.New(slog.NewTextHandler(log, nil)))))
	}
	desc := aliasDesc
	desc.Methods = slices.Clone(aliasDesc.Methods)
	desc.Methods[0].Handle = func(_ any, ctx context.Context, req rt.Message) (rt.Message, error) {
		if p, _ := rt.PeerFrom(ctx); p.Principal != principal || (p.TLS != nil) != fc.tls {
			return nil, rt.Errorf(rt.Internal, "principal %q and TLS %v, want %q and %v", p.Principal, p.TLS != nil, principal, fc.tls)
		}
		return req, nil
	}
	return aliasClient(b, aliasServe(b, &desc, sopts...), copts...), log
}

// BenchmarkFeatures measures what TLS, bearer-token authentication and
// the server's access log add to a unary call of a 581-byte message over
// loopback TCP, client and server in this process: each alone, all three
// together, and none (plain, the default options), with one caller at a
// time (c=1) and with 64 callers sharing the client (c=64). Beside ns/op,
// B/op and allocs/op it reports cpu-ns/op, the CPU time of the process
// per call (client and server). Every call's answer is checked, and so
// are the principal and TLS state the handler sees and, for the access
// log, one line per call.
func BenchmarkFeatures(b *testing.B) {
	for _, fc := range []featureCase{
		{name: "plain"},
		{name: "tls", tls: true},
		{name: "auth", auth: true},
		{name: "accesslog", accessLog: true},
		{name: "all", tls: true, auth: true, accessLog: true},
	} {
		b.Run("opt="+fc.name, func(b *testing.B) {
			cli, log := featureEnv(b, fc)
			call := func(req, resp *aliasMsg) error {
				err := cli.Invoke(context.Background(), &aliasDesc, 0, req, resp)
				if err == nil && resp.S != req.S {
					err = fmt.Errorf("%d bytes back, want %d", len(resp.S), len(req.S))
				}
				resp.S = ""
				return err
			}
			if err := call(&aliasMsg{S: benchBody}, new(aliasMsg)); err != nil { // connect
				b.Fatal(err)
			}
			for _, c := range []int{1, 64} {
				b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
					var lines int64
					if log != nil {
						lines = log.n.Load()
					}
					benchcpu.Calls(b, c, func() func() error {
						req, resp := &aliasMsg{S: benchBody}, new(aliasMsg)
						return func() error { return call(req, resp) }
					})
					if log != nil {
						if got := log.n.Load() - lines; got != int64(b.N) {
							b.Fatalf("%d access log lines for %d calls", got, b.N)
						}
					}
				})
			}
		})
	}
}
