//go:build linux

package hostile

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// ips returns the first n attacker addresses.
func ips(n int) []net.IP {
	s := make([]net.IP, n)
	for i := range s {
		s[i] = attackerIP(i)
	}
	return s
}

// 5,000 connections that exchange prefaces and then stay idle cost at
// most 16 KiB of buffers each: the heap stays under 80 MiB (issue 11).
func TestIdleConnections(t *testing.T) {
	const n = 5000
	tg := newTarget(t, 80*mib)
	before := tg.heap.live()
	start := time.Now()
	conns, err := tg.openMany(n, ips(10), tg.heap.over)
	took := time.Since(start)
	live := tg.heap.live()
	if len(conns) > 0 {
		t.Logf("%d idle connections from 10 IPs opened in %v: heap in use after a GC %.1f MiB, %.1f KiB per connection (both ends: the server's and the attacker's few hundred bytes)",
			len(conns), took.Round(time.Millisecond), mibs(live), float64(live-min(before, live))/float64(len(conns))/1024)
	}
	if err != nil {
		t.Errorf("opening idle connections: %v", err)
	}
	if len(conns) < n {
		t.Errorf("stopped after %d of %d connections: the heap reached %.1f MiB", len(conns), n, mibs(tg.heap.peak.Load()))
	}
	tg.check()
}

// dribble writes frame to each of conns one byte at a time, a byte to
// each every few milliseconds, until the server has closed them all or
// bound passes. It returns how many the server closed and the longest it
// took.
func dribble(conns []net.Conn, frame []byte, bound time.Duration) (n int, longest time.Duration) {
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < len(frame); i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, c := range conns {
				_, _ = c.Write(frame[i : i+1])
			}
		}
	}()
	n, last := awaitCloseAll(conns, bound)
	close(stop)
	wg.Wait()
	return n, last.Sub(start)
}

// Slowloris: frames dribbled a byte at a time do not hold connections
// open. A first frame is bound by Limits.FirstFrameTimeout; a later one
// by the heartbeat (a client that sends no whole frame for three
// heartbeats is closed).
func TestSlowloris(t *testing.T) {
	const n = 100
	const bound = 10 * time.Second
	frame := hello(9, strings.Repeat("s", 4<<10)) // 4 KiB: dribbling it would take 40 s
	cases := []struct {
		name  string
		opts  []rt.ServerOption
		first []byte // sent whole before the dribble
	}{
		{"first frame dribbled, FirstFrameTimeout 1s", []rt.ServerOption{rt.WithLimits(rt.Limits{FirstFrameTimeout: time.Second})}, nil},
		{"later frame dribbled, heartbeat 500ms", []rt.ServerOption{rt.WithHeartbeat(500 * time.Millisecond)}, ping(1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, heapLimit, tc.opts...)
			conns, err := tg.openMany(n, ips(4), tg.heap.over)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range conns {
				if _, err := c.Write(tc.first); err != nil {
					t.Fatal(err)
				}
			}
			closedN, longest := dribble(conns, frame, bound)
			t.Logf("%d connections dribbling a byte every 10ms: %d closed by the server, the last after %v", len(conns), closedN, longest.Round(time.Millisecond))
			if closedN != len(conns) {
				t.Errorf("%d of %d dribbling connections still open after %v", len(conns)-closedN, len(conns), bound)
			}
			tg.check()
		})
	}
	// A well-behaved client's large request arrives in pieces too: the
	// answers to the frames before it must not wait for its last byte.
	t.Run("answers before a partial frame", func(t *testing.T) {
		tg := newTarget(t, heapLimit)
		c, err := tg.open(attackerIP(0))
		if err != nil {
			t.Fatal(err)
		}
		b := append(append(ping(1), hello(2, "before")...), frame[:20]...)
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		const bound = 2 * time.Second
		r := wire.NewReader(c, wire.ReaderOptions{})
		_ = c.SetReadDeadline(time.Now().Add(bound))
		got := 0
		start := time.Now()
		for ; got < 2; got++ {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		t.Logf("ping and request, then 20 bytes of a %d-byte frame: %d of 2 answers within %v", len(frame), got, time.Since(start).Round(time.Millisecond))
		if got < 2 {
			t.Errorf("%d of 2 answers arrived within %v: the server holds the answers to whole frames while the frame after them is incomplete", got, bound)
		}
		tg.check()
	})
}

// Connections that never send their first frame, or not even a preface,
// are closed by Limits.FirstFrameTimeout and Limits.PrefaceTimeout. The
// attackers do not wait for the server's preface: the server may close
// them before they would read it.
func TestNoFirstFrame(t *testing.T) {
	const timeout = time.Second
	tg := newTarget(t, heapLimit, rt.WithLimits(rt.Limits{FirstFrameTimeout: timeout, PrefaceTimeout: timeout}))
	start := time.Now()
	groups := []struct {
		name  string
		sends []byte
		conns []net.Conn
	}{
		{"preface and no frame", prefaceV1, nil},
		{"no preface", nil, nil},
		{"half a preface", prefaceV1[:7], nil},
		{"preface and 10 bytes of a frame", append(bytes.Clone(prefaceV1), hello(1, "x")[:10]...), nil},
	}
	for i := range 100 {
		for j := range groups {
			g := &groups[j]
			c, err := tg.dial(attackerIP(4*j + i%4))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(g.sends); err != nil && !closed(err) {
				t.Fatal(err)
			}
			g.conns = append(g.conns, c)
		}
	}
	for _, g := range groups {
		n, last := awaitCloseAll(g.conns, 2*timeout+closeBound)
		t.Logf("%s: %d of %d closed, the last %v after the attack started", g.name, n, len(g.conns), last.Sub(start).Round(time.Millisecond))
		if n != len(g.conns) {
			t.Errorf("%s: %d of %d connections still open %v after the attack started (timeouts %v)", g.name, len(g.conns)-n, len(g.conns), time.Since(start).Round(time.Millisecond), timeout)
		}
	}
	tg.check()
}

// 300 connections that each claim a 4 MiB frame and stall after a few
// bytes of it make the server hold no more than the bytes it received:
// the heap stays under 64 MiB (issue 11, item 5).
func TestStalledClaims(t *testing.T) {
	const n = 300
	tg := newTarget(t, heapLimit)
	// A whole first frame (so that FirstFrameTimeout does not apply),
	// then a request claiming the largest frame allowed, of which only
	// 100 bytes come.
	claim := append(ping(1), header(wire.TypeRequest, 0, 2, wire.DefaultMaxFrameSize-wire.HeaderLen)...)
	claim = append(claim, bytes.Repeat([]byte{'x'}, 100)...)
	before := tg.heap.live()
	var conns []net.Conn
	for i := 0; i < n && !tg.heap.over(); i++ {
		c, err := tg.open(attackerIP(i % 2))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(claim); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	tg.awaitRead(closeBound)
	live := tg.heap.live()
	t.Logf("%d connections stalled after claiming %d-byte frames: heap in use after a GC %.1f MiB (%.1f KiB per connection, both ends)",
		len(conns), wire.DefaultMaxFrameSize, mibs(live), float64(live-min(before, live))/float64(len(conns))/1024)
	if len(conns) < n {
		t.Errorf("stopped after %d of %d connections: the heap reached %.1f MiB (the server reserves each claimed frame before its bytes arrive)", len(conns), n, mibs(tg.heap.peak.Load()))
	}
	tg.check()
}

// Connections from one IP beyond Limits.MaxConnsPerIP are refused while
// other IPs are still served; connections beyond Limits.MaxConns are
// refused whatever their IP, and those open before keep being served; the default admits DefaultMaxConnsPerIP
// (at least the 256 of the performance issue's fan-in) from one host.
func TestConnsPerIP(t *testing.T) {
	// openSeq opens n connections from ip one after the other and
	// returns how many the server admitted (answered the preface of).
	openSeq := func(tg *target, ip net.IP, n int) (admitted int) {
		for range n {
			c, err := tg.dial(ip)
			if err != nil {
				tg.t.Fatal(err)
			}
			if err := handshake(c); err != nil {
				c.Close()
				continue
			}
			admitted++
		}
		return admitted
	}
	t.Run("over the limit", func(t *testing.T) {
		const limit, tries = 8, 20
		tg := newTarget(t, heapLimit, rt.WithLimits(rt.Limits{MaxConnsPerIP: limit}))
		start := time.Now()
		admitted := openSeq(tg, attackerIP(0), tries)
		other := openSeq(tg, attackerIP(1), 1)
		logged := tg.logs.count("rt: connection refused")
		t.Logf("MaxConnsPerIP %d: %d connections from one IP: %d admitted, %d refused (%d logged) in %v; another IP: %d of 1 admitted",
			limit, tries, admitted, tries-admitted, logged, time.Since(start).Round(time.Millisecond), other)
		if admitted != limit || other != 1 || logged != tries-limit {
			t.Errorf("admitted %d from one IP, %d from another, refusals logged %d; want %d, 1, %d", admitted, other, logged, limit, tries-limit)
		}
		tg.check()
	})
	t.Run("over the overall limit", func(t *testing.T) {
		const limit, tries = 8, 20
		tg := newTarget(t, heapLimit, rt.WithLimits(rt.Limits{MaxConns: limit}))
		good := tg.srv.Stats().Conns // the good client's, open before the attack
		start := time.Now()
		admitted := 0
		for i := range tries {
			admitted += openSeq(tg, attackerIP(i%4), 1)
		}
		logged := tg.logs.count("rt: connection refused")
		t.Logf("MaxConns %d, %d held by the good client: %d connections from 4 IPs: %d admitted, %d refused (%d logged) in %v",
			limit, good, tries, admitted, tries-admitted, logged, time.Since(start).Round(time.Millisecond))
		if want := limit - good; good == 0 || admitted != want || logged != tries-want {
			t.Errorf("admitted %d with %d connections of the good client open, refusals logged %d; want %d admitted, %d logged", admitted, good, logged, want, tries-want)
		}
		// Free the attackers' places, so that check's fresh client is
		// admitted.
		tg.closeAttackers()
		if !poll(closeBound, func() bool { return tg.srv.Stats().Conns <= good }) {
			t.Errorf("%d connections open %v after the attackers closed theirs, want %d", tg.srv.Stats().Conns, closeBound, good)
		}
		tg.check()
	})
	t.Run("default", func(t *testing.T) {
		if rt.DefaultMaxConnsPerIP < 256 {
			t.Errorf("DefaultMaxConnsPerIP is %d: below the 256 connections one client host may need", rt.DefaultMaxConnsPerIP)
		}
		tg := newTarget(t, heapLimit)
		start := time.Now()
		admitted := openSeq(tg, attackerIP(0), rt.DefaultMaxConnsPerIP+1)
		t.Logf("default limits: %d connections from one IP: %d admitted in %v", rt.DefaultMaxConnsPerIP+1, admitted, time.Since(start).Round(time.Millisecond))
		if admitted != rt.DefaultMaxConnsPerIP {
			t.Errorf("admitted %d of %d connections from one IP, want DefaultMaxConnsPerIP = %d", admitted, rt.DefaultMaxConnsPerIP+1, rt.DefaultMaxConnsPerIP)
		}
		tg.check()
	})
}
