package rt_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/balance"
)

// A TLS-only server tells plaintext HTTP clients why it refuses them, as
// it tells yrpc's: an h2c gRPC client gets a GOAWAY of
// INADEQUATE_SECURITY, which rt's client reports naming TLS and grpcs://
// (it saw "connection reset by peer"); a plaintext gRPC-Web (HTTP/1.1)
// request gets a 400 answer naming TLS (it saw the connection closed).
// The server keeps serving.
func TestPlaintextHTTPRefusedWithReason(t *testing.T) {
	checkLeaks(t)
	// Made first: newEnv checks for leaks when its cleanup has run, and
	// would count the goroutines of a server made after it and closed
	// after that check.
	plain := newEnv(t, nil)
	ca := testcerts.NewCA(t, "test CA")
	e := newTLSEnv(t, testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), nil))

	h2c, err := rt.NewClient(rt.WithAddrs("grpc://" + e.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer h2c.Close()
	_, err = call(ctxT(t), h2c, &testDesc, 0, "x")
	if rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "requires TLS") || !strings.Contains(err.Error(), "grpcs://"+e.addr) {
		t.Errorf("h2c client: err = %v, want Unavailable naming TLS and grpcs://%s", err, e.addr)
	}

	// The refused call did not run: it goes on to a plaintext provider
	// (a migration where some servers require TLS already).
	mixed, err := rt.NewClient(rt.WithAddrs("grpc://"+e.addr, "grpc://"+plain.lis.Addr().String()),
		rt.WithBalancer(balance.NewRoundRobin(balance.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	defer mixed.Close()
	for i := range 4 {
		if got, err := call(ctxT(t), mixed, &testDesc, 0, "x"); err != nil || got != "x" {
			t.Errorf("call %d, one provider refusing h2c: %q, %v", i, got, err)
		}
	}

	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "POST /test.Echo/Echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\nContent-Length: 5\r\n\r\n\x00\x00\x00\x00\x00"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Errorf("gRPC-Web over plaintext: %v, want a 400 answer", err)
	} else {
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "requires TLS") {
			t.Errorf("gRPC-Web over plaintext: %s %q, want 400 naming TLS", res.Status, body)
		}
	}

	good := e.client(rt.WithTLS(testcerts.ClientConfig(ca)))
	if got, err := call(ctxT(t), good, &testDesc, 0, "still serving"); err != nil || got != "still serving" {
		t.Fatalf("TLS client after the refusals: %q, %v", got, err)
	}
}
