package rt_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// HTTP/2 attacks against a server on the same port as yrpc, each while a
// well-behaved gRPC client and a yrpc client (from 127.0.0.1) call it: the
// server stays up, its heap stays under 64 MiB, the good clients see no
// failure, and the attacker (from 127.0.0.2 and up) is cut off where the
// defence says. The attacks speak raw HTTP/2 frames.

// HTTP/2 frame types and flags (RFC 9113).
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2GoAway       = 0x7
	h2Continuation = 0x9

	h2EndStream  = 0x1
	h2EndHeaders = 0x4
	h2Ack        = 0x1
)

const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

func appendH2Frame(b []byte, typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}

// appendHPACKInt appends an HPACK integer with an n-bit prefix (RFC 7541
// 5.1) whose high bits are first's.
func appendHPACKInt(b []byte, first byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	for v -= limit; v >= 128; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

// appendHPACKLiteral appends a header field as a literal without
// indexing, with a literal name, no Huffman coding.
func appendHPACKLiteral(b []byte, name, value string) []byte {
	b = append(b, 0)
	b = appendHPACKInt(b, 0, 7, len(name))
	b = append(b, name...)
	b = appendHPACKInt(b, 0, 7, len(value))
	return append(b, value...)
}

// grpcRequestHeaders is the header block of a gRPC call of path.
func grpcRequestHeaders(path string) []byte {
	var b []byte
	for _, kv := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", "attacker"},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		b = appendHPACKLiteral(b, kv[0], kv[1])
	}
	return b
}

// attacker is a raw HTTP/2 connection from a loopback address other
// than 127.0.0.1, whose frames from the server are read (and counted)
// in the background.
type attacker struct {
	c       net.Conn
	dialed  time.Time
	goAway  atomic.Int64 // when the server sent GOAWAY, since dialed; 0: not yet
	frames  atomic.Int64
	headers atomic.Int64  // HEADERS frames among them
	header  atomic.Int64  // when the first came, since dialed
	gone    atomic.Int64  // when the connection ended, since dialed
	closed  chan struct{} // the server closed the connection
}

func dialAttacker(t *testing.T, addr string, i int) *attacker {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(i/250), byte(2+i%250))}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	a := &attacker{c: c, dialed: time.Now(), closed: make(chan struct{})}
	t.Cleanup(func() {
		c.Close()
		<-a.closed
	})
	go a.read()
	return a
}

func (a *attacker) read() {
	defer close(a.closed)
	defer func() { a.gone.Store(int64(time.Since(a.dialed))) }()
	r := bufio.NewReader(a.c)
	var h [9]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		if h[3] == h2GoAway && a.goAway.Load() == 0 {
			a.goAway.Store(int64(time.Since(a.dialed)))
		}
		a.frames.Add(1)
		if h[3] == h2Headers && a.headers.Add(1) == 1 {
			a.header.Store(int64(time.Since(a.dialed)))
		}
		if _, err := r.Discard(int(h[0])<<16 | int(h[1])<<8 | int(h[2])); err != nil {
			return
		}
	}
}

// start sends the client preface and empty settings.
func (a *attacker) start() error {
	_, err := a.c.Write(appendH2Frame([]byte(h2Preface), h2Settings, 0, 0, nil))
	return err
}

// goodClients call the server over gRPC and yrpc until stop is closed,
// and report their calls and failures.
func goodClients(t *testing.T, addr string, stop <-chan struct{}) func() (calls, failures int64, firstErr error) {
	g := newH2CClient(t, addr)
	cli, err := rt.NewClient(rt.WithAddrs(addr))
	if err != nil {
		t.Fatal(err)
	}
	var calls, failures atomic.Int64
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		failures.Add(1)
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := strconv.Itoa(w) + "-" + strconv.Itoa(i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				var got string
				var err error
				if w%2 == 0 {
					got, err = g.unary(ctx, "/test.Echo/Echo", s)
				} else {
					got, err = call(ctx, cli, &testDesc, 0, s)
				}
				cancel()
				calls.Add(1)
				if err != nil || got != s {
					fail(errors.Join(err, errors.New("got "+got)))
				}
			}
		}()
	}
	return func() (int64, int64, error) {
		wg.Wait()
		cli.Close()
		return calls.Load(), failures.Load(), first
	}
}

// heapWatch samples the heap in use until stop is closed and returns the
// largest sample.
func heapWatch(stop <-chan struct{}) func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		<-done
		return peak.Load()
	}
}

// attackEnv runs attack against a fresh server while the good clients
// call it, and checks the outcome.
func attackEnv(t *testing.T, limits rt.Limits, attack func(addr string)) {
	checkLeaks(t)
	errs := &h2Errors{counts: make(map[string]int)}
	srv := rt.NewServer(rt.WithLimits(limits), rt.WithLogger(slog.New(errs)))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)
	stop := make(chan struct{})
	peak := heapWatch(stop)
	good := goodClients(t, addr, stop)
	attacked := false
	defer func() {
		if !attacked {
			// The attack failed the test: stop the good clients before
			// the leak check, or they run on into the next tests.
			close(stop)
			good()
			peak()
		}
	}()
	attack(addr)
	attacked = true
	close(stop)
	calls, failures, first := good()
	heap := peak()
	t.Logf("good clients: %d calls, %d failed; peak heap in use %.1f MiB; HTTP/2 errors the server counted: %v", calls, failures, float64(heap)/(1<<20), errs.get())
	if failures > 0 || calls == 0 {
		t.Errorf("good clients: %d of %d calls failed; first: %v", failures, calls, first)
	}
	if heap > 64<<20 {
		t.Errorf("peak heap in use %d MiB, want under 64", heap>>20)
	}
}

// h2Errors is a slog.Handler that counts the server's HTTP/2 connection
// errors by type.
type h2Errors struct {
	mu     sync.Mutex
	counts map[string]int
}

func (h *h2Errors) Enabled(context.Context, slog.Level) bool { return true }
func (h *h2Errors) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *h2Errors) WithGroup(string) slog.Handler            { return h }
func (h *h2Errors) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "rt: HTTP/2 connection error" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		h.mu.Lock()
		h.counts[a.Value.String()]++
		h.mu.Unlock()
		return true
	})
	return nil
}

func (h *h2Errors) get() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.counts)
}

// Rapid reset (CVE-2023-44487): streams opened and reset at once, as fast
// as the connection takes them. The server runs at most
// MaxConcurrentStreams calls per connection (Limits.MaxCallsPerConn) and
// sends GOAWAY (ENHANCE_YOUR_CALM) to a peer whose streams reset before
// their answers outnumber the finished ones by twice that (at least 100).
func TestGRPCAttackRapidReset(t *testing.T) {
	attackEnv(t, rt.Limits{MaxCallsPerConn: 100}, func(addr string) {
		var goAways int
		const conns, streams = 2, 10_000
		for c := range conns {
			a := dialAttacker(t, addr, c)
			if err := a.start(); err != nil {
				t.Fatal(err)
			}
			hdr := grpcRequestHeaders("/test.Echo/Echo")
			var batch []byte
			var peakG, opened int
			var werr error
			for i := range streams {
				id := uint32(2*i + 1)
				batch = appendH2Frame(batch, h2Headers, h2EndHeaders, id, hdr)
				batch = appendH2Frame(batch, h2RSTStream, 0, id, []byte{0, 0, 0, 8}) // CANCEL
				if len(batch) > 32<<10 {
					if _, werr = a.c.Write(batch); werr != nil {
						break // the server cut the connection
					}
					opened = i + 1
					batch = batch[:0]
					peakG = max(peakG, runtime.NumGoroutine())
				}
			}
			_ = a.c.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds the wait below if the server let it be
			_ = a.c.(*net.TCPConn).CloseWrite()
			<-a.closed
			if a.goAway.Load() != 0 {
				goAways++
			}
			t.Logf("attacker %d: %d streams opened and reset in %v (write error: %v); %d frames from the server, GOAWAY at %v; peak goroutines %d",
				c, opened, time.Since(a.dialed).Round(time.Millisecond), werr, a.frames.Load(), time.Duration(a.goAway.Load()).Round(time.Millisecond), peakG)
			if peakG > 2000 {
				t.Errorf("%d goroutines during the attack", peakG)
			}
		}
		t.Logf("%d of %d attacking connections got GOAWAY", goAways, conns)
		if goAways != conns {
			t.Errorf("%d of %d attacking connections got GOAWAY, want every one (the reset budget)", goAways, conns)
		}
	})
}

// CONTINUATION flood (CVE-2023-45288): a header block that never ends.
// The server closes the connection once the block passes twice the header
// size limit (at least 64 KiB) or 64 frames, so that empty CONTINUATION
// frames, which add nothing, do not hold it either.
func TestGRPCAttackContinuationFlood(t *testing.T) {
	attackEnv(t, rt.Limits{FirstFrameTimeout: 500 * time.Millisecond}, func(addr string) {
		for i, fill := range []int{16 << 10, 0} {
			a := dialAttacker(t, addr, i)
			if err := a.start(); err != nil {
				t.Fatal(err)
			}
			frag := make([]byte, 0, fill+64)
			for j := 0; len(frag) < fill; j++ {
				frag = appendHPACKLiteral(frag, "x-flood-"+strconv.Itoa(j), "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")
			}
			b := appendH2Frame(nil, h2Headers, 0, 1, grpcRequestHeaders("/test.Echo/Echo"))
			sent := 0
			start := time.Now()
			for sent < 1<<30 {
				b = appendH2Frame(b, h2Continuation, 0, 1, frag)
				if len(b) < 64<<10 {
					continue
				}
				n, err := a.c.Write(b)
				sent += n
				b = b[:0]
				if err != nil {
					break
				}
				if fill == 0 && time.Since(start) > 10*time.Second {
					break
				}
			}
			<-a.closed
			t.Logf("flood of %d-byte CONTINUATION frames: GOAWAY at %v, connection closed at %v, %d KiB written (socket buffers included)",
				fill, time.Duration(a.goAway.Load()).Round(time.Millisecond), time.Since(start).Round(time.Millisecond), sent>>10)
			if fill > 0 && (a.goAway.Load() == 0 || time.Duration(a.goAway.Load()) > time.Second) {
				t.Errorf("no GOAWAY within 1s of a header block past the limit")
			}
			if fill == 0 && time.Since(start) > 5*time.Second {
				t.Errorf("empty CONTINUATION frames held the connection for %v", time.Since(start))
			}
		}
	})
}

// Slowloris over HTTP/2: connections that send part of the preface, the
// preface and a partial frame, or a complete call header and part of its
// body, and then nothing. The first two are closed at
// Limits.FirstFrameTimeout (no call started); the third call fails with
// DeadlineExceeded then, its request not having arrived. Each holds a
// connection slot meanwhile, within Limits.MaxConnsPerIP.
func TestGRPCAttackSlowloris(t *testing.T) {
	attackEnv(t, rt.Limits{FirstFrameTimeout: 500 * time.Millisecond}, func(addr string) {
		const n = 150
		stalls := [][]byte{
			[]byte(h2Preface[:10]),
			appendH2Frame([]byte(h2Preface), h2Settings, 0, 0, nil)[:len(h2Preface)+9+5],
			appendH2Frame(appendH2Frame(appendH2Frame([]byte(h2Preface), h2Settings, 0, 0, nil),
				h2Headers, h2EndHeaders, 1, grpcRequestHeaders("/test.Echo/Echo")), h2Data, 0, 1, []byte{0, 0, 0, 0, 100, 'x'}),
		}
		as := make([]*attacker, n)
		start := time.Now()
		for i := range as {
			as[i] = dialAttacker(t, addr, i)
			if _, err := as[i].c.Write(stalls[i%len(stalls)]); err != nil {
				t.Fatal(err)
			}
		}
		var answered int
		var slowest time.Duration // from a connection's dial to its end or answer
		for i, a := range as {
			switch i % len(stalls) {
			case 2:
				// The call's answer (a HEADERS frame with the status)
				// comes; the connection stays open, idle.
				for a.headers.Load() == 0 {
					select {
					case <-a.closed:
						t.Fatalf("stalled call %d: connection closed", i)
					default:
					}
					time.Sleep(time.Millisecond) // polls a condition
					if time.Since(start) > 10*time.Second {
						t.Fatalf("stalled call %d: no answer in 10s", i)
					}
				}
				answered++
				slowest = max(slowest, time.Duration(a.header.Load()))
				a.c.Close()
			default:
				<-a.closed
				slowest = max(slowest, time.Duration(a.gone.Load()))
			}
		}
		t.Logf("%d stalled connections closed or answered in %v, each within %v of its dial (FirstFrameTimeout 500ms); %d stalled calls answered",
			n, time.Since(start).Round(time.Millisecond), slowest.Round(time.Millisecond), answered)
		if slowest > 5*time.Second {
			t.Errorf("a stalled connection held for %v", slowest)
		}
	})
}

// The server announces its HTTP/2 limits: MaxConcurrentStreams from
// Limits.MaxCallsPerConn, the header list size from the metadata limit.
func TestGRPCHTTP2Settings(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer(rt.WithLimits(rt.Limits{MaxCallsPerConn: 77}), rt.WithMaxMetadataSize(8<<10))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(appendH2Frame([]byte(h2Preface), h2Settings, 0, 0, nil)); err != nil {
		t.Fatal(err)
	}
	var h [9]byte
	if _, err := io.ReadFull(c, h[:]); err != nil || h[3] != h2Settings {
		t.Fatalf("first frame % x, %v", h, err)
	}
	p := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
	if _, err := io.ReadFull(c, p); err != nil {
		t.Fatal(err)
	}
	got := map[uint16]uint32{}
	for ; len(p) >= 6; p = p[6:] {
		got[binary.BigEndian.Uint16(p)] = binary.BigEndian.Uint32(p[2:])
	}
	const maxStreams, maxFrame, maxHeaderList = 0x3, 0x5, 0x6
	if got[maxStreams] != 77 {
		t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS = %d, want 77", got[maxStreams])
	}
	if v, ok := got[maxFrame]; ok && v != 16<<10 {
		t.Errorf("SETTINGS_MAX_FRAME_SIZE = %d, want 16384", v)
	}
	if v := got[maxHeaderList]; v < 8<<10 || v > 10<<10 {
		t.Errorf("SETTINGS_MAX_HEADER_LIST_SIZE = %d, want about 9 KiB", v)
	}
}

// HTTP connections count against Limits.MaxConnsPerIP while they are
// open, and stop counting once closed.
func TestGRPCConnectionLimits(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer(rt.WithLimits(rt.Limits{MaxConnsPerIP: 1}))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)
	first, second := newH2CClient(t, addr), newH2CClient(t, addr)
	if _, err := first.unary(ctxT(t), "/test.Echo/Echo", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := second.unary(ctxT(t), "/test.Echo/Echo", "2"); err == nil {
		t.Fatal("a second connection from the IP was admitted")
	}
	first.hc.CloseIdleConnections()
	waitUntil(t, func() bool {
		_, err := second.unary(ctxT(t), "/test.Echo/Echo", "2")
		return err == nil
	})
}
