//go:build ignore

// Command oldpeer is one side of the old-build interop test: a server or
// a client of examples/hello's bench.Hello, built once from this checkout
// and once from yrpc's first release, so that scripts/test.sh can make
// each version call the other over loopback (old_build_interop). It uses
// only API that both versions have; the build tag keeps it out of this
// module's packages.
//
//	oldpeer serve ADDRFILE   serves on 127.0.0.1, writes HOST:PORT to ADDRFILE, runs until killed
//	oldpeer call ADDR        makes the calls below to ADDR; prints "ok", or exits 1 naming the first problem
//
// The calls: a small request, echoed with the request metadata's "k" as
// the response metadata's "echo" and the call's deadline seen; a 1 MiB
// request, compressed (both sides compress bodies of 1 KiB and more); a
// request the server fails with NotFound; and 100 calls at once on the
// connection.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/rt"
)

// compressAbove is both sides' compression threshold (rt.WithCompression).
const compressAbove = 1 << 10

func main() {
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "serve":
		err = serve(os.Args[2])
	case len(os.Args) == 3 && os.Args[1] == "call":
		err = call(os.Args[2])
		if err == nil {
			fmt.Println("ok")
		}
	default:
		err = errors.New("usage: oldpeer serve ADDRFILE | oldpeer call ADDR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "oldpeer:", err)
		os.Exit(1)
	}
}

type hello struct {
	hellorpc.UnimplementedHelloServer
}

// Say answers with the request, Field1 set to "echo" and Field2 to the
// length of Field9, or fails with NotFound when Field1 is "fail". Field3
// is 1 when the call has a deadline.
func (hello) Say(ctx context.Context, req *hellorpc.BenchmarkMessage) (*hellorpc.BenchmarkMessage, error) {
	if req.Field1 == "fail" {
		return nil, rt.Errorf(rt.NotFound, "no %s here", req.Field9)
	}
	if k := rt.IncomingMetadata(ctx).Get("k"); k != "" {
		rt.SetResponseMetadata(ctx, "echo", k)
	}
	req.Field1, req.Field2, req.Field3 = "echo", int32(len(req.Field9)), 0
	if _, ok := ctx.Deadline(); ok {
		req.Field3 = 1
	}
	return req, nil
}

func serve(addrFile string) error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := rt.NewServer(rt.WithCompression(compressAbove))
	hellorpc.RegisterHello(srv, hello{})
	if err := os.WriteFile(addrFile, []byte(lis.Addr().String()), 0o600); err != nil {
		return err
	}
	return srv.Serve(context.Background(), lis)
}

func call(addr string) error {
	cli, err := rt.NewClient(rt.WithAddrs(addr), rt.WithCompression(compressAbove))
	if err != nil {
		return err
	}
	defer cli.Close()
	hc := hellorpc.NewHelloClient(cli)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var md rt.MD
	resp, err := hc.Say(rt.WithMetadata(ctx, "k", "v"), &hellorpc.BenchmarkMessage{Field1: "hi", Field9: "hello"}, rt.ResponseMetadata(&md))
	switch {
	case err != nil:
		return fmt.Errorf("small call: %v", err)
	case resp.Field1 != "echo" || resp.Field2 != 5 || resp.Field9 != "hello":
		return fmt.Errorf("small call: answer field1=%q field2=%d field9=%q, want echo, 5, hello", resp.Field1, resp.Field2, resp.Field9)
	case md.Get("echo") != "v":
		return fmt.Errorf("small call: response metadata %v, want echo=v", md)
	case resp.Field3 != 1:
		return errors.New("small call: the server saw no deadline")
	}

	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	resp, err = hc.Say(ctx, &hellorpc.BenchmarkMessage{Field9: big})
	switch {
	case err != nil:
		return fmt.Errorf("1 MiB call: %v", err)
	case resp.Field2 != int32(len(big)) || resp.Field9 != big:
		return fmt.Errorf("1 MiB call: the server saw %d bytes; %d came back", resp.Field2, len(resp.Field9))
	}

	_, err = hc.Say(ctx, &hellorpc.BenchmarkMessage{Field1: "fail", Field9: "user"})
	if rt.CodeOf(err) != rt.NotFound || !strings.Contains(err.Error(), "no user here") {
		return fmt.Errorf("failing call: %v, want NotFound saying \"no user here\"", err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := fmt.Sprint(i)
			r, err := hc.Say(ctx, &hellorpc.BenchmarkMessage{Field9: s})
			if err == nil && (r.Field9 != s || r.Field2 != int32(len(s))) {
				err = fmt.Errorf("answer %q to request %q", r.Field9, s)
			}
			if err != nil {
				errs <- fmt.Errorf("100 calls at once: %v", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}
