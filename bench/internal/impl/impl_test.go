package impl

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/bench/internal/certs"
	"github.com/yrpc/yrpc/bench/internal/harness"
)

// TestImpls serves every implementation on loopback and drives a short
// load through its client, twice as many calls as workers; the TLS ones
// with a set of certificates made for the test.
func TestImpls(t *testing.T) {
	dir := t.TempDir()
	if err := certs.Generate(dir); err != nil {
		t.Fatal(err)
	}
	set, err := certs.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range All() {
		t.Run(im.Name, func(t *testing.T) {
			for _, c := range []int{1, 4} {
				runImpl(t, im, Options{C: c}, 64, set)
			}
			// The message-size curve's smallest and a large size.
			for _, size := range []int{64, 300 << 10} {
				runImpl(t, im, Options{C: 3, Size: size}, 9, set)
			}
		})
	}
}

// TestAddrList checks that only Balanced clients (of All and Grouped)
// take a list of addresses, and that they call through it.
func TestAddrList(t *testing.T) {
	for _, im := range append(All(), Grouped()...) {
		if im.TLS {
			continue
		}
		t.Run(im.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if !im.Balanced {
				if cl, err := im.Dial(ctx, "127.0.0.1:1,127.0.0.1:2", Options{C: 2}); err == nil {
					cl.Close()
					t.Fatal("a list of addresses was accepted")
				}
				return
			}
			var addrs []string
			for range 2 {
				addrs = append(addrs, serveImpl(t, ctx, im, Options{}))
			}
			cl, err := im.Dial(ctx, strings.Join(addrs, ","), Options{C: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if ph := harness.Run(ctx, cl, 2, 40); ph.Errors != 0 {
				t.Fatalf("%d errors, first %v", ph.Errors, ph.FirstErr)
			}
		})
	}
}

// serveImpl serves im on a loopback listener until the test ends and
// returns its address.
func serveImpl(t *testing.T, ctx context.Context, im *Impl, o Options) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- im.Serve(sctx, lis, o) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// TestTLSImpls checks that the TLS implementations are the expected ones
// and really serve TLS: their plaintext client is refused.
func TestTLSImpls(t *testing.T) {
	dir := t.TempDir()
	if err := certs.Generate(dir); err != nil {
		t.Fatal(err)
	}
	set, err := certs.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, im := range All() {
		if !im.TLS {
			continue
		}
		names = append(names, im.Name)
		t.Run(im.Name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sctx, stop := context.WithCancel(ctx)
			served := make(chan error, 1)
			go func() { served <- im.Serve(sctx, lis, Options{TLS: set.Server()}) }()
			defer func() { stop(); <-served }()
			cl, err := im.Dial(ctx, lis.Addr().String(), Options{C: 1})
			if err != nil {
				return // refused at once
			}
			defer cl.Close()
			if ph := harness.Run(ctx, cl, 1, 2); ph.Errors != 2 {
				t.Fatalf("a plaintext client made %d of 2 calls fail, want 2", ph.Errors)
			}
		})
	}
	want := []string{"grpc-tls"}
	if Has("yrpc") {
		want = []string{"yrpc-tls", "grpc-tls"}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("TLS implementations %q, want %q", names, want)
	}
}

func runImpl(t *testing.T, im *Impl, o Options, n int, set *certs.Set) {
	t.Helper()
	srv := o
	if im.TLS {
		srv.TLS, o.TLS = set.Server(), set.Client()
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- im.Serve(sctx, lis, srv) }()

	cl, err := im.Dial(ctx, lis.Addr().String(), o)
	if err != nil {
		stop()
		t.Fatalf("dial: %v", err)
	}
	ph := harness.Run(ctx, cl, o.C, n)
	if err := cl.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	stop()
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
	if ph.Errors != 0 || ph.FirstErr != nil {
		t.Fatalf("%+v: %d errors, first %v", o, ph.Errors, ph.FirstErr)
	}
	if len(ph.Lat) != n || ph.Lat[0] <= 0 {
		t.Fatalf("%+v: latencies not recorded: len %d, min %v", o, len(ph.Lat), ph.Lat[0])
	}
}

func TestLookup(t *testing.T) {
	for _, name := range AllNames() {
		im, err := Lookup(name)
		if err != nil || im.Name != name {
			t.Errorf("Lookup(%q) = %v, %v", name, im, err)
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown name succeeded")
	}
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		buf  int
		want []byte
		err  bool
	}{
		{"empty payload", appendFrame(nil, nil), 8, []byte{}, false},
		{"payload", appendFrame(nil, []byte("hello")), 8, []byte("hello"), false},
		{"too long", appendFrame(nil, []byte("hello, world")), 8, nil, true},
		{"short header", []byte{0, 0}, 8, nil, true},
		{"short payload", appendFrame(nil, []byte("hello"))[:7], 8, nil, true},
	}
	for _, tt := range tests {
		got, err := readFrame(bytes.NewReader(tt.in), make([]byte, tt.buf))
		if (err != nil) != tt.err || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: readFrame = %q, %v; want %q, err %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func FuzzReadFrame(f *testing.F) {
	req, reply, err := rawPayloads(0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(req)
	f.Add(reply)
	f.Add(appendFrame(appendFrame(nil, []byte("a")), []byte("bc")))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		buf := make([]byte, 1024)
		for {
			p, err := readFrame(r, buf)
			if err != nil {
				return
			}
			if len(p) > len(buf) {
				t.Fatalf("payload of %d bytes from a %d-byte buffer", len(p), len(buf))
			}
		}
	})
}
