package dns

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

// DNS wire constants (RFC 1035, RFC 2782, RFC 3596).
const (
	typeA    = 1
	typeAAAA = 28
	typeSRV  = 33
	classIN  = 1

	rcodeNXDomain = 3
)

// stubDNS is a tiny authoritative DNS server on 127.0.0.1 UDP for tests. It
// answers A, AAAA and SRV questions from its records: NXDOMAIN for a name
// it has no record of, an empty NOERROR answer for a type the name lacks.
// Names are rooted and lower case ("shop.test."). Safe for concurrent use.
type stubDNS struct {
	conn net.PacketConn
	done chan struct{}

	mu      sync.Mutex
	ips     map[string][]net.IP // A and AAAA records
	srvs    map[string][]net.SRV
	queries int
}

func startStub(t *testing.T) *stubDNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stubDNS{conn: conn, done: make(chan struct{}), ips: map[string][]net.IP{}, srvs: map[string][]net.SRV{}}
	go s.serve()
	t.Cleanup(func() {
		conn.Close()
		<-s.done
	})
	return s
}

// resolver returns a Go resolver that sends every query to s.
func (s *stubDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

func (s *stubDNS) setIPs(name string, ips ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ips == nil {
		delete(s.ips, name)
		return
	}
	s.ips[name] = nil
	for _, ip := range ips {
		s.ips[name] = append(s.ips[name], net.ParseIP(ip))
	}
}

func (s *stubDNS) setSRV(name string, srvs ...net.SRV) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srvs[name] = srvs
}

func (s *stubDNS) queryCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

func (s *stubDNS) serve() {
	defer close(s.done)
	buf := make([]byte, 1500)
	for {
		n, addr, err := s.conn.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		if resp := s.answer(buf[:n]); resp != nil {
			s.conn.WriteTo(resp, addr)
		}
	}
}

// answer returns the response to query q, or nil to drop a query it does
// not understand.
func (s *stubDNS) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 { // one question
		return nil
	}
	name, end, ok := readName(q, 12)
	if !ok || end+4 > len(q) {
		return nil
	}
	qtype, qclass := binary.BigEndian.Uint16(q[end:]), binary.BigEndian.Uint16(q[end+2:])

	s.mu.Lock()
	s.queries++
	ips, hasIPs := s.ips[name]
	srvs, hasSRV := s.srvs[name]
	s.mu.Unlock()

	var rrs [][]byte // rdata of each answer, all of type qtype
	if qclass == classIN {
		for _, ip := range ips {
			if ip4 := ip.To4(); ip4 != nil && qtype == typeA {
				rrs = append(rrs, ip4)
			} else if ip4 == nil && qtype == typeAAAA {
				rrs = append(rrs, ip.To16())
			}
		}
		if qtype == typeSRV {
			for _, r := range srvs {
				rd := binary.BigEndian.AppendUint16(nil, r.Priority)
				rd = binary.BigEndian.AppendUint16(rd, r.Weight)
				rd = binary.BigEndian.AppendUint16(rd, r.Port)
				rrs = append(rrs, appendName(rd, r.Target))
			}
		}
	}
	var rcode byte
	if !hasIPs && !hasSRV {
		rcode = rcodeNXDomain
	}

	resp := append([]byte(nil), q[:2]...) // ID
	// QR, AA and the query's RD; RA and the rcode.
	resp = append(resp, 0x80|0x04|q[2]&0x01, 0x80|rcode)
	resp = binary.BigEndian.AppendUint16(resp, 1)                // QDCOUNT
	resp = binary.BigEndian.AppendUint16(resp, uint16(len(rrs))) // ANCOUNT
	resp = append(resp, 0, 0, 0, 0)                              // NSCOUNT, ARCOUNT
	resp = append(resp, q[12:end+4]...)                          // the question
	for _, rd := range rrs {
		resp = append(resp, 0xc0, 12) // the name: a pointer to the question's
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, classIN)
		resp = binary.BigEndian.AppendUint32(resp, 5) // TTL
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rd)))
		resp = append(resp, rd...)
	}
	return resp
}

// readName reads the uncompressed name at b[off:] and returns it rooted and
// in lower case, with the offset after it.
func readName(b []byte, off int) (string, int, bool) {
	var sb strings.Builder
	for off < len(b) {
		n := int(b[off])
		off++
		if n == 0 {
			if sb.Len() == 0 {
				sb.WriteByte('.')
			}
			return strings.ToLower(sb.String()), off, true
		}
		if n > 63 || off+n > len(b) { // a pointer or a truncated label
			return "", 0, false
		}
		sb.Write(b[off : off+n])
		sb.WriteByte('.')
		off += n
	}
	return "", 0, false
}

// appendName appends the rooted name in wire format, uncompressed.
func appendName(b []byte, name string) []byte {
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if l != "" {
			b = append(b, byte(len(l)))
			b = append(b, l...)
		}
	}
	return append(b, 0)
}

// stubName roots DefaultName under yrpc.test.
func stubName(k registry.Key) string { return DefaultName(k) + ".yrpc.test." }

func TestStubA(t *testing.T) {
	stub := startStub(t)
	stub.setIPs("shop-catalog.yrpc.test.", "127.0.0.2", "127.0.0.1", "::1")
	r, ticks := newTicking(t, Options{Resolver: stub.resolver(), Port: 7000, Name: stubName})
	rec := registrytest.NewRecorder()
	stop, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rec.WaitFor(t, "A and AAAA records", registrytest.HasAddrs("127.0.0.1:7000", "127.0.0.2:7000", "[::1]:7000"))

	stub.setIPs("shop-catalog.yrpc.test.", "127.0.0.1", "::1")
	ticks.tick(t)
	rec.WaitFor(t, "one address fewer", registrytest.HasAddrs("127.0.0.1:7000", "[::1]:7000"))

	stub.setIPs("shop-catalog.yrpc.test.") // NXDOMAIN
	ticks.tick(t)
	ticks.tick(t) // the first NXDOMAIN answer is handled
	stub.setIPs("shop-catalog.yrpc.test.", "127.0.0.3")
	ticks.tick(t)
	rec.WaitFor(t, "the name back", registrytest.HasAddrs("127.0.0.3:7000"))
	if _, n := rec.Latest(); n != 3 {
		t.Errorf("fn called %d times, want 3: the NXDOMAIN answer published something", n)
	}
	// Three lookups found addresses (A and AAAA answered) and two found
	// NXDOMAIN (at least one of the two queries answered).
	if q := stub.queryCount(); q < 8 {
		t.Errorf("the stub answered %d queries, want at least 8", q)
	}
}

func TestStubSRV(t *testing.T) {
	stub := startStub(t)
	stub.setSRV("_yrpc._tcp.shop-catalog.yrpc.test.",
		net.SRV{Target: "b.shop.test.", Port: 7002, Priority: 0, Weight: 70},
		net.SRV{Target: "a.shop.test.", Port: 7001, Priority: 0, Weight: 30},
		net.SRV{Target: "backup.shop.test.", Port: 7003, Priority: 1, Weight: 50})
	r, ticks := newTicking(t, Options{Resolver: stub.resolver(), SRV: true, SRVService: "yrpc", Name: stubName})
	rec := registrytest.NewRecorder()
	stop, err := r.Watch(registry.Key{Service: "shop.Catalog"}, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := rec.WaitFor(t, "the priority-0 SRV records", registrytest.HasAddrs("a.shop.test:7001", "b.shop.test:7002"))
	if s.Providers[0].Weight != 30 || s.Providers[1].Weight != 70 {
		t.Errorf("weights = %d, %d, want 30, 70", s.Providers[0].Weight, s.Providers[1].Weight)
	}

	stub.setSRV("_yrpc._tcp.shop-catalog.yrpc.test.", net.SRV{Target: "a.shop.test.", Port: 7001, Weight: 30},
		net.SRV{Target: "b.shop.test.", Port: 7002, Weight: 70})
	ticks.tick(t) // the same records, backup gone: nothing to publish
	ticks.tick(t) // that answer is handled
	stub.setSRV("_yrpc._tcp.shop-catalog.yrpc.test.", net.SRV{Target: "a.shop.test.", Port: 7001, Weight: 30})
	ticks.tick(t)
	rec.WaitFor(t, "one record left", registrytest.HasAddrs("a.shop.test:7001"))
	if _, n := rec.Latest(); n != 2 {
		t.Errorf("fn called %d times, want 2: an unchanged answer published something", n)
	}
}

type greeter struct{}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name + "!"}, nil
}

// TestStubCall calls a greeter server found through the stub: an rt client
// with the DNS registry resolves greeter-greeter.yrpc.test. to 127.0.0.1
// and dials the server's port.
func TestStubCall(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer()
	greeterrpc.RegisterGreeter(srv, greeter{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), registrytest.Timeout)
		defer cancel()
		srv.Shutdown(ctx)
		<-served
	}()

	stub := startStub(t)
	stub.setIPs("greeter-greeter.yrpc.test.", "127.0.0.1")
	r, _ := newTicking(t, Options{Resolver: stub.resolver(), Port: lis.Addr().(*net.TCPAddr).Port, Name: stubName})
	cli, err := rt.NewClient(rt.WithRegistry(r))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), registrytest.Timeout)
	defer cancel()
	reply, err := greeterrpc.NewGreeterClient(cli).SayHello(ctx, &greeterrpc.HelloRequest{Name: "dns"})
	if err != nil || reply.Message != "Hello, dns!" {
		t.Fatalf("SayHello = %v, %v", reply, err)
	}
}
