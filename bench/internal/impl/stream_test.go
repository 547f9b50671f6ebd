package impl

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGroupedImpls runs every grouped implementation (streams, gRPC-Go's
// client on yrpc's server) on loopback with a short load, at one and four
// workers and with a small and a large request: every message or call
// arrives and checks against its request (runImpl fails on any error),
// and the echo streams end cleanly on Close.
func TestGroupedImpls(t *testing.T) {
	for _, im := range Grouped() {
		t.Run(strings.ReplaceAll(im.Name, "/", ":"), func(t *testing.T) {
			for _, c := range []int{1, 4} {
				runImpl(t, im, Options{C: c}, 50, nil)
			}
			for _, size := range []int{64, 300 << 10} {
				runImpl(t, im, Options{C: 3, Size: size}, 9, nil)
			}
		})
	}
}

// TestGroupedNames checks the grouped rows: named GROUP/IMPL, found by
// Lookup, not in All, and the ones of the issues' benchmarks all there.
func TestGroupedNames(t *testing.T) {
	var names []string
	for _, im := range Grouped() {
		names = append(names, im.Name)
		if group, name, ok := strings.Cut(im.Name, "/"); !ok || group == "" || name == "" {
			t.Errorf("grouped implementation %q is not named GROUP/IMPL", im.Name)
		}
		if got, err := Lookup(im.Name); err != nil || got.Name != im.Name {
			t.Errorf("Lookup(%q) = %v, %v", im.Name, got, err)
		}
		if slices.Contains(Names(), im.Name) {
			t.Errorf("%q is in All", im.Name)
		}
	}
	want := []string{"feed/grpc", "feed/drpc", "echo/grpc", "echo/drpc", "grpcc/grpc"}
	if Has("yrpc") {
		want = []string{"feed/yrpc", "feed/grpc", "feed/drpc", "echo/yrpc", "echo/grpc", "echo/drpc",
			"grpcc/grpc", "grpcc/yrpc", "native/yrpc", "native/yrpc-grpcoff"}
	}
	if !slices.Equal(names, want) {
		t.Errorf("Grouped() = %q, want %q", names, want)
	}
}

// TestGRPCOffRefusesGRPC checks that native/yrpc-grpcoff's server really
// has no gRPC endpoint: gRPC-Go's client fails on it.
func TestGRPCOffRefusesGRPC(t *testing.T) {
	off, err := Lookup("native/yrpc-grpcoff")
	if err != nil {
		t.Skip("built without yrpc")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := dialGRPC(ctx, serveImpl(t, ctx, off, Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	if err := cl.Call(cctx, 0); err == nil {
		t.Fatal("gRPC-Go's call to a server with WithGRPC(GRPCOff) succeeded")
	}
}
