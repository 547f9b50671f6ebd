package rt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/limiter"
	"github.com/yrpc/yrpc/rt/registry"
)

// Serve accepts connections on lis and serves them until Shutdown or Close,
// or until ctx is done (which closes the server at once). On its first call
// it registers the server's services in the registry, if one is set. Serve
// may be called for several listeners; it returns ErrServerClosed after
// Shutdown or Close. Like net/http's, it closes lis when it returns, also
// when it could not start (no service registered, the registry refused).
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	if err := s.start(ctx, lis); err != nil {
		lis.Close()
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	defer stop()
	var delay time.Duration
	for {
		nc, err := lis.Accept()
		if err != nil {
			if delay, err = s.acceptFailed(lis, err, delay); err != nil {
				return err
			}
			continue
		}
		delay = 0
		if err := s.accepted(nc); err != nil {
			return err
		}
	}
}

// start readies the server to serve lis: it registers the services for
// lis (announce), marks the server ready and starts its ticker.
func (s *Server) start(ctx context.Context, lis net.Listener) error {
	s.mu.Lock()
	if s.regErr != nil {
		err := s.regErr
		s.mu.Unlock()
		return err
	}
	if s.closed || s.closing.Load() || s.withdrawn {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if len(s.services) == 0 {
		s.mu.Unlock()
		return errors.New("rt: serve: no services registered")
	}
	s.serving = true
	s.listeners[lis] = struct{}{}
	s.mu.Unlock()

	if err := s.announce(ctx, lis); err != nil {
		return err
	}
	s.readyOnce.Do(func() { close(s.ready) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if !s.ticking {
		s.ticking = true
		s.wg.Add(1)
		go s.ticker()
	}
	return nil
}

// acceptFailed handles a failed Accept: ErrServerClosed once the server
// is closing, err itself if Accept cannot succeed again, else (out of
// file descriptors, a connection aborted before it was accepted) it waits
// before the next Accept, as net/http does, and returns the longer delay
// for the next failure.
func (s *Server) acceptFailed(lis net.Listener, err error, delay time.Duration) (time.Duration, error) {
	if s.goaway.Load() || s.isClosed() {
		return 0, ErrServerClosed
	}
	if !temporaryAcceptError(err) {
		return 0, fmt.Errorf("rt: accept on %s: %w", lis.Addr(), err)
	}
	delay = min(max(2*delay, 5*time.Millisecond), time.Second)
	s.o.logger.Warn("rt: accept failed; retrying", "addr", lis.Addr().String(), "err", err, "delay", delay)
	select {
	case <-s.o.clock.After(delay):
		return delay, nil
	case <-s.done:
		return 0, ErrServerClosed
	}
}

// accepted serves nc if the connection limits admit it (else closes it);
// ErrServerClosed once the server is closed.
func (s *Server) accepted(nc net.Conn) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return ErrServerClosed
	}
	ip := limiter.ClientKey(nc.RemoteAddr().String())
	if why := s.admit(ip); why != "" {
		s.mu.Unlock()
		s.o.logger.Warn("rt: connection refused", "peer", nc.RemoteAddr().String(), "reason", why)
		nc.Close()
		return nil
	}
	c := newServerConn(s, nc, ip)
	s.conns[c] = struct{}{}
	s.perIP[ip]++
	s.wg.Add(1)
	s.mu.Unlock()
	go c.serve()
	return nil
}

// temporaryAcceptError reports whether Accept may succeed if tried again:
// a timeout, descriptors running out (EMFILE, ENFILE), memory for sockets
// running out, or a connection the peer aborted while it was queued.
func temporaryAcceptError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range [...]error{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS, syscall.ENOMEM, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// admit says why a connection from ip is refused ("" when it is not):
// the limits on connections overall and per client IP. Called with mu
// held.
func (s *Server) admit(ip string) string {
	l := &s.o.limits
	switch {
	case l.MaxConns > 0 && len(s.conns) >= l.MaxConns:
		return fmt.Sprintf("%d connections open (Limits.MaxConns)", len(s.conns))
	case l.MaxConnsPerIP > 0 && s.perIP[ip] >= l.MaxConnsPerIP:
		return fmt.Sprintf("%d connections open from %s (Limits.MaxConnsPerIP)", s.perIP[ip], ip)
	}
	return ""
}

// announce registers every service for lis and starts watching their
// governance config.
func (s *Server) announce(ctx context.Context, lis net.Listener) error {
	reg := s.o.registry
	if reg == nil || isGRPCListener(lis) {
		return nil
	}
	addr := s.o.advertise
	if addr == "" {
		addr = advertiseAddr(lis.Addr())
	}
	now := s.o.clock.Now()
	for _, se := range s.services {
		e := registry.Endpoint{Key: se.key, Role: registry.Provider, Addr: addr, Weight: s.o.weight, App: s.o.app, Tags: s.o.tags, StartTime: now,
			TLS: s.o.tls != nil && !s.o.plaintextOK, Token: s.token, Methods: se.methodNames(), Protocols: s.protocols(),
			NotServing: s.health.notServing()}
		if err := reg.Register(ctx, e); err != nil {
			return fmt.Errorf("rt: register %s at %s: %w", se.key, addr, err)
		}
		s.mu.Lock()
		withdrawn := s.withdrawn
		if !withdrawn {
			s.endpoints = append(s.endpoints, e)
		}
		s.mu.Unlock()
		if withdrawn {
			// Shutdown or Close deregistered while this registration
			// was under way: undo it, or the stopped server would stay
			// listed.
			s.unregister(e)
			return ErrServerClosed
		}
		se := se
		stop, err := reg.Watch(se.key, func(snap registry.Snapshot) { s.applyConfig(se, snap.Config) })
		if err != nil {
			return fmt.Errorf("rt: watch config of %s: %w", se.key, err)
		}
		s.mu.Lock()
		withdrawn = s.withdrawn
		if !withdrawn {
			s.watches = append(s.watches, stop)
		}
		s.mu.Unlock()
		if withdrawn {
			stop()
			return ErrServerClosed
		}
	}
	return nil
}

// unregister removes e, which announce registered after Shutdown or
// Close deregistered the server's entries.
func (s *Server) unregister(e registry.Endpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), closeDeregisterTimeout)
	defer cancel()
	if err := s.o.registry.Deregister(ctx, e); err != nil && !errors.Is(err, registry.ErrClosed) {
		s.o.logger.Warn("rt: deregister failed", "key", e.Key.String(), "addr", e.Addr, "err", err)
	}
}

// applyConfig installs the governance rate limit of se (or the schema's when
// the config sets none). Only a limit that passes registry.RateLimit.Check
// overrides the schema's: one with a rate of 0, negative, NaN or infinite,
// or a negative burst (which Governors and `yrpcc ctl limit` refuse, but
// an older writer or zkCli can store) is ignored with a warning, so that
// it neither lifts the schema's limit nor refuses every call.
func (s *Server) applyConfig(se *serviceEntry, cfg registry.Config) {
	s.health.noteConfig(se, cfg)
	rate, burst, perApp := se.sd.Policy.RateLimit.Rate, se.sd.Policy.RateLimit.Burst, false
	if rl := cfg.RateLimit; rl != nil {
		if err := rl.Check(); err == nil {
			rate, burst, perApp = rl.Rate, rl.Burst, rl.PerApp
		} else {
			s.o.logger.Warn("rt: governance rate limit ignored; the schema's applies",
				"service", se.key.String(), "err", err.Error())
		}
	}
	if rate <= 0 {
		se.limit.Store(nil)
		return
	}
	cur := se.limit.Load()
	switch {
	case cur != nil && cur.same(rate, burst, perApp):
		return
	case cur != nil && cur.perApp == perApp:
		se.limit.Store(cur.withLimit(rate, burst, s.o.clock.Now()))
	default:
		se.limit.Store(newCallLimiter(rate, burst, perApp))
	}
	s.o.logger.Info("rt: rate limit set", "service", se.key.String(), "rate", rate, "burst", burst, "per_app", perApp)
}

// advertiseAddr turns a listener address into one that peers can dial.
func advertiseAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		return a.String()
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, ia := range addrs {
			if n, ok := ia.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return net.JoinHostPort(n.IP.String(), port)
			}
		}
	}
	return net.JoinHostPort("127.0.0.1", port)
}
