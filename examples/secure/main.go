// Command secure shows yrpc's security features working together, and
// prints what each caller got:
//
//   - mutual TLS with certificates made in memory at start (a CA, the
//     server's, and client certificates naming workloads by SPIFFE ID);
//     the server's certificate rotates without a restart (GetCertificate);
//   - authorization of the certificate's identity: SayHello is allowed to
//     the web workload and refused to the batch workload (PermissionDenied);
//   - a registry token: a client that dials the provider's address instead
//     of finding it through the registry is refused (Unauthenticated);
//   - plaintext refused: a client without TLS fails at once, naming the
//     provider; a certificate from another CA is refused in the handshake;
//   - with -registry zk://host:port, a locked-down ZooKeeper: the provider
//     registers with the providers' digest credential, an operator's
//     credential writes governance config, and a process without
//     credentials can neither register, take over a provider's node nor
//     drain it (zkreg.DigestPolicy).
//
// It serves the greeter example's Greeter service.
//
//	go run ./examples/secure
//	go run ./examples/secure -registry zk://127.0.0.1:2181
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// The workloads' identities, as SPIFFE IDs in their client certificates.
const (
	webID   = "spiffe://example.org/ns/demo/sa/web"
	batchID = "spiffe://example.org/ns/demo/sa/batch"
)

// greeter answers with the caller's identity, as the handler sees it.
type greeter struct {
	greeterrpc.UnimplementedGreeterServer
}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	p, _ := rt.PeerFrom(ctx)
	return &greeterrpc.HelloReply{Message: fmt.Sprintf("Hello, %s! You are %s (certificate CN %q).", req.Name, p.Principal, p.CommonName)}, nil
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "secure:", err)
		os.Exit(1)
	}
}

// printer writes one aligned line per step.
type printer struct{ w io.Writer }

func (p *printer) line(what, outcome string) { fmt.Fprintf(p.w, "%-44s %s\n", what+":", outcome) }

// outcome describes a call's result: OK and the reply, or the error's code
// and message.
func outcome(reply *greeterrpc.HelloReply, err error) string {
	if err == nil {
		return "OK: " + reply.Message
	}
	code := rt.CodeOf(err).String()
	if rest, ok := strings.CutPrefix(err.Error(), "rt: "+code); ok {
		return code + rest
	}
	return code + ": " + err.Error()
}

// pki is the example's certificates.
type pki struct {
	ca, other          *authority // other: a CA the server does not trust
	server1, server2   *tls.Certificate
	web, batch, impost *tls.Certificate
}

func newPKI() (*pki, error) {
	var p pki
	var err error
	steps := []func() error{
		func() (err error) { p.ca, err = newAuthority("example CA"); return },
		func() (err error) { p.other, err = newAuthority("another CA"); return },
		func() (err error) { p.server1, err = p.ca.serverCert("server-1"); return },
		func() (err error) { p.server2, err = p.ca.serverCert("server-2"); return },
		func() (err error) { p.web, err = p.ca.clientCert("web", webID); return },
		func() (err error) { p.batch, err = p.ca.clientCert("batch", batchID); return },
		func() (err error) { p.impost, err = p.other.clientCert("web", webID); return },
	}
	for _, step := range steps {
		if err = step(); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("secure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	regURL := fs.String("registry", "mem://", "registry: mem:// (in-process) or zk://host:port[,host:port]")
	root := fs.String("root", "/yrpc-secure", "ZooKeeper root of the example's nodes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	out := &printer{w: stdout}

	certs, err := newPKI()
	if err != nil {
		return err
	}
	regs, err := openRegistries(ctx, *regURL, *root, log)
	if err != nil {
		return err
	}
	defer regs.close()
	out.line("registry", regs.name)

	// The server: mutual TLS (client certificates of the example CA
	// required), its certificate read per handshake so that it can rotate,
	// SayHello allowed to the web workload only, and a registry token.
	var serverCert atomic.Pointer[tls.Certificate]
	serverCert.Store(certs.server1)
	srv := rt.NewServer(
		rt.WithRegistry(regs.provider),
		rt.WithLogger(log),
		rt.WithTLS(&tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return serverCert.Load(), nil },
			ClientAuth:     tls.RequireAndVerifyClientCert,
			ClientCAs:      certs.ca.pool,
		}),
		rt.WithAccessRules(rt.AccessRules{"greeter.Greeter/SayHello": {webID}}),
		rt.WithRegistryToken(true),
	)
	greeterrpc.RegisterGreeter(srv, greeter{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := lis.Addr().String()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }()
	defer srv.Close()
	select {
	case <-srv.Ready():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("waiting for the server to register: %w", ctx.Err())
	}
	out.line("server", "mutual TLS on "+addr+", registered as TLS-only with a registry token; SayHello allowed to "+webID)

	// Clients. Each presents its certificate through GetClientCertificate,
	// which a client that rotates its certificate reads anew per
	// handshake. The server's certificate each client saw is recorded by
	// VerifyConnection (which runs after the standard verification).
	var seen atomic.Value
	clientTLS := func(roots *authority, cert *tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: roots.pool,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil },
			VerifyConnection: func(cs tls.ConnectionState) error {
				seen.Store(cs.PeerCertificates[0].Subject.CommonName)
				return nil
			}}
	}
	viaRegistry, direct := rt.WithRegistry(regs.consumer), rt.WithAddrs(addr)
	callers := []struct {
		name string
		opts []rt.ClientOption
	}{
		{"web, through the registry", []rt.ClientOption{viaRegistry, rt.WithTLS(clientTLS(certs.ca, certs.web))}},
		{"batch, through the registry", []rt.ClientOption{viaRegistry, rt.WithTLS(clientTLS(certs.ca, certs.batch))}},
		{"web, dialing the address (no token)", []rt.ClientOption{direct, rt.WithTLS(clientTLS(certs.ca, certs.web))}},
		{"no TLS, through the registry", []rt.ClientOption{viaRegistry}},
		{"no TLS, dialing the address", []rt.ClientOption{direct}},
		{"certificate from another CA", []rt.ClientOption{viaRegistry, rt.WithTLS(clientTLS(certs.ca, certs.impost))}},
	}
	for _, c := range callers {
		out.line(c.name, call(ctx, c.opts))
	}

	// Rotation: the server hands out its new certificate from the next
	// handshake on; connections made before keep theirs.
	out.line("server certificate seen", fmt.Sprint(seen.Load()))
	serverCert.Store(certs.server2)
	out.line("web after the rotation", call(ctx, []rt.ClientOption{viaRegistry, rt.WithTLS(clientTLS(certs.ca, certs.web))}))
	out.line("server certificate seen", fmt.Sprint(seen.Load()))

	key := registry.Key{Service: greeterrpc.GreeterServiceDesc.Name}
	if regs.zk != nil {
		regs.zk.demo(ctx, out, key, addr)
	}

	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, rt.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	if regs.zk != nil {
		regs.zk.cleanup(ctx, out, key)
	}
	return nil
}

// call makes one SayHello with a new client of opts and describes what it
// got.
func call(ctx context.Context, opts []rt.ClientOption) string {
	cli, err := rt.NewClient(opts...)
	if err != nil {
		return "NewClient: " + err.Error()
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return outcome(greeterrpc.NewGreeterClient(cli).SayHello(ctx, &greeterrpc.HelloRequest{Name: "secure"}))
}
