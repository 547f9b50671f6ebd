package rt_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
)

// A client with TLS and secret credentials given a plaintext gRPC
// provider (grpc://, h2c) refuses to call it, calls and streams alike,
// naming the provider and grpcs://: the credentials never cross the
// network in plaintext. Credentials that allow plaintext go through.
func TestSecretCredentialsNotSentOverH2C(t *testing.T) {
	var mu sync.Mutex
	var seen []string // authorization values the server received
	auth := rt.AuthenticatorFunc(func(_ context.Context, r rt.AuthRequest) (string, error) {
		mu.Lock()
		seen = append(seen, r.MD.Get(rt.MDAuthorization))
		mu.Unlock()
		return "someone", nil
	})
	stream := oneStream("test.Streams", "Up", 0x2001, rt.ClientStreaming, func(ss rt.ServerStreamer) error {
		return ss.SendMsg(&msg{S: "done"})
	})
	e := newEnvWith(t, func(s *rt.Server) { s.RegisterService(&stream, struct{}{}) }, []rt.ServerOption{rt.WithAuthenticator(auth)})
	target := "grpc://" + e.lis.Addr().String()
	ca := testcerts.NewCA(t, "test CA")
	newClient := func(creds rt.Credentials) *rt.Client {
		c, err := rt.NewClient(rt.WithAddrs(target), rt.WithTLS(testcerts.ClientConfig(ca)), rt.WithCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	secret := newClient(rt.BearerToken{Token: "s3cr3t"})
	_, err := call(ctxT(t), secret, &testDesc, 0, "x")
	if rt.CodeOf(err) != rt.FailedPrecondition || !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), "grpcs://") {
		t.Errorf("call: err = %v, want FailedPrecondition naming %s and grpcs://", err, target)
	}
	if s, err := secret.NewStream(ctxT(t), &stream, 0); err == nil {
		err = s.SendMsg(&msg{S: "x"})
		if err == nil {
			err = s.CloseSend()
		}
		if err == nil {
			err = s.RecvMsg(new(msg))
		}
		if rt.CodeOf(err) != rt.FailedPrecondition {
			t.Errorf("stream: err = %v, want FailedPrecondition", err)
		}
	} else if rt.CodeOf(err) != rt.FailedPrecondition {
		t.Errorf("NewStream: err = %v, want FailedPrecondition", err)
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the server received credentials over h2c: %q", seen)
	}
	mu.Unlock()

	open := newClient(rt.BearerToken{Token: "not-secret", AllowPlaintext: true})
	if got, err := call(ctxT(t), open, &testDesc, 0, "x"); err != nil || got != "x" {
		t.Fatalf("credentials that allow plaintext: %q, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "Bearer not-secret" {
		t.Fatalf("the server saw %q, want the plaintext-allowed token once", seen)
	}
}
