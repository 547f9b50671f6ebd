package rt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcclient"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
)

// ErrClientClosed is returned by calls on a closed Client, and by calls in
// flight when it closes.
var ErrClientClosed = &Error{Code: Unavailable, Message: "client closed"}

// Client calls generated services. It finds providers in its registry,
// balances calls over them, keeps one multiplexed connection per provider
// (WithPoolSize for more) and guards calls with per-provider circuit
// breakers, retries within a budget and mocks. Make one with NewClient and
// share it: a Client is safe for concurrent use and serves every service.
type Client struct {
	o      clientConfig
	cc     conn.Config       // what its connections share
	gcfg   grpcclient.Config // what its gRPC connections share
	reg    registry.Registry
	ownReg bool
	invoke InvokeFunc
	id     string

	svcs atomic.Pointer[map[*ServiceDesc]*svcState]

	mu     sync.Mutex
	pools  map[string]*conn.Pool
	gpools map[string]*grpcclient.Pool // by target (grpc://host:port, grpcs://...)
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
	calls  sync.Pool         // of *call
	rec    *metrics.Recorder // the default observer; nil with WithObserver

	credsMD MD // the metadata of staticCredentials, asked once; nil: ask per call
}

// NewClient returns a client configured by opts. It needs WithRegistry or
// WithAddrs; it connects lazily, on the first call to each provider.
func NewClient(opts ...ClientOption) (*Client, error) {
	c := &Client{o: newClientConfig(opts), pools: make(map[string]*conn.Pool), gpools: make(map[string]*grpcclient.Pool), done: make(chan struct{})}
	c.rec = c.o.defaultRecorder()
	switch {
	case c.o.registry != nil && len(c.o.addrs) > 0:
		return nil, errors.New("rt: new client: WithRegistry and WithAddrs are exclusive")
	case c.o.registry != nil:
		c.reg = c.o.registry
	case len(c.o.addrs) > 0:
		for _, a := range c.o.addrs {
			if err := registry.CheckAddr(a); err != nil {
				return nil, fmt.Errorf("rt: new client: WithAddrs: %w", err)
			}
		}
		c.reg, c.ownReg = registry.NewStatic(c.o.addrs...), true
	default:
		return nil, errors.New("rt: new client: no providers: use WithRegistry or WithAddrs")
	}
	if err := checkMethodLimits(c.o.methodLimits); err != nil {
		return nil, err
	}
	if c.o.creds != nil && c.o.creds.RequireTLS() && c.o.tls == nil {
		return nil, errors.New("rt: new client: the credentials require TLS: add rt.WithTLS (or allow plaintext in the credentials, e.g. BearerToken.AllowPlaintext, on a trusted network)")
	}
	if s, ok := c.o.creds.(staticCredentials); ok {
		md, err := s.RequestMetadata(context.Background(), nil)
		if err != nil {
			return nil, fmt.Errorf("rt: new client: credentials: %w", err)
		}
		c.credsMD = md
	}
	c.cc = conn.Config{
		Dial:         c.o.dialer,
		Features:     c.o.features(),
		Settings:     c.o.settings(0),
		Reader:       c.o.readerOptions(0),
		Compress:     c.o.compress,
		Compressors:  c.o.compressors,
		SpinWait:     c.o.spinWait,
		SpinGate:     c.o.spinGate,
		Now:          c.o.clock.Now,
		PoolSize:     c.o.poolSize,
		Buffers:      c.o.buffers,
		TLS:          c.o.tls,
		WriteTimeout: c.o.writeTimeout,
	}
	c.gcfg = grpcclient.Config{
		Dial:           c.o.dialer,
		TLS:            c.o.tls,
		MaxMessage:     c.o.maxFrame,
		MaxHeaderBytes: c.o.maxMD + 1<<10,
		Heartbeat:      max(c.o.heartbeat, 0),
		WriteTimeout:   c.o.writeTimeout,
		Compress:       c.o.compress,
		Now:            c.o.clock.Now,
	}
	host, _ := os.Hostname()
	c.id = host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	m := make(map[*ServiceDesc]*svcState)
	c.svcs.Store(&m)
	c.calls.New = func() any { return newCall(c) }
	c.invoke = chainClient(c.o.interceptors, c.call)
	if c.o.heartbeat > 0 {
		c.wg.Add(1)
		go c.heartbeats()
	}
	return c, nil
}

// Metrics returns a snapshot of the client's calls and attempts: the
// default Recorder's; empty when WithObserver replaced it.
func (c *Client) Metrics() metrics.Snapshot {
	if c.rec == nil {
		return metrics.Snapshot{}
	}
	return c.rec.Snapshot()
}

// Recorder returns the client's default metrics Recorder, nil when
// WithObserver replaced it; Recorder().Publish makes it an expvar.
func (c *Client) Recorder() *metrics.Recorder { return c.rec }

// Invoke implements Invoker: generated stubs call it.
//
// Invoke and what it calls stay on the caller's stack while the call
// waits, and the garbage collector scans that stack at every cycle: their
// failures are made in functions of their own (checkInvoke, intercept,
// and so on down to conn.Call), so that the waiting frames stay small.
func (c *Client) Invoke(ctx context.Context, sd *ServiceDesc, m int, req, resp Message, opts ...CallOption) error {
	_, err := c.run(ctx, sd, m, req, resp, false, opts)
	return err
}

// run makes the call of Invoke, or with fresh of InvokeNew, and returns
// its response: resp, or with fresh the one it made (nil for oneway
// methods). With fresh, the call makes its response once the answer's
// size is known (see call.resp), unless interceptors, which see the
// response before the call, or a descriptor without NewResponseWithRoom
// need it made now.
func (c *Client) run(ctx context.Context, sd *ServiceDesc, m int, req, resp Message, fresh bool, opts []CallOption) (Message, error) {
	if err := checkInvoke(sd, m, req, resp == nil && !fresh); err != nil {
		return nil, err
	}
	if fresh {
		resp = c.responseNow(&sd.Methods[m])
	}
	st, err := c.service(sd)
	if err != nil {
		return nil, err
	}
	k := c.calls.Get().(*call)
	k.st, k.info = st, st.info(m)
	k.opts = callOptions{}
	for _, f := range opts {
		f(&k.opts)
	}
	if len(c.o.interceptors) == 0 {
		err = k.do(ctx, req, resp)
	} else {
		err = c.intercept(ctx, k, req, resp)
	}
	if resp == nil {
		resp = k.resp
	}
	k.reset()
	c.calls.Put(k)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// responseNow returns the response message that InvokeNew must make
// before the call, nil if none (see run).
func (c *Client) responseNow(m *MethodDesc) Message {
	if m.Oneway || m.NewResponseWithRoom != nil && len(c.o.interceptors) == 0 {
		return nil
	}
	return m.NewResponse()
}

// checkInvoke refuses an Invoke of a method index out of sd's range, or
// with a nil request, or with no response message (noResp) for a method
// that answers.
func checkInvoke(sd *ServiceDesc, m int, req Message, noResp bool) error {
	switch {
	case m < 0 || m >= len(sd.Methods):
		return Errorf(Internal, "invoke %s: method index %d out of range", sd.Name, m)
	case req == nil:
		return Errorf(InvalidArgument, "%s: nil request message (not sent)", sd.Methods[m].FullName)
	case noResp && !sd.Methods[m].Oneway:
		return Errorf(InvalidArgument, "%s: nil response message (not sent)", sd.Methods[m].FullName)
	}
	return nil
}

// intercept runs call k through the client's interceptors.
func (c *Client) intercept(ctx context.Context, k *call, req, resp Message) error {
	return c.invoke(context.WithValue(ctx, callKey{}, k), k.info, req, resp)
}

type callKey struct{}

// call is the InvokeFunc under the interceptors: it finds the call that
// Invoke started in ctx and runs it with the request and response the
// interceptors pass down.
func (c *Client) call(ctx context.Context, info *CallInfo, req, resp Message) error {
	k, _ := ctx.Value(callKey{}).(*call)
	if k == nil {
		return Errorf(Internal, "%s: call state lost (an interceptor replaced the context with one not derived from it)", info.Method.FullName)
	}
	return k.do(ctx, req, resp)
}

// service returns the state of sd, creating it (and its registry watch) on
// first use.
func (c *Client) service(sd *ServiceDesc) (*svcState, error) {
	if st := (*c.svcs.Load())[sd]; st != nil {
		return st, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClientClosed
	}
	old := *c.svcs.Load()
	if st := old[sd]; st != nil {
		return st, nil
	}
	st, err := newSvcState(c, sd)
	if err != nil {
		return nil, err
	}
	m := make(map[*ServiceDesc]*svcState, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[sd] = st
	c.svcs.Store(&m)
	return st, nil
}

// pool returns the connection pool of addr.
func (c *Client) pool(addr string) *conn.Pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pools[addr]
	if p == nil {
		p = conn.NewPool(addr, &c.cc)
		c.pools[addr] = p
		if c.closed {
			// A service that Close has not stopped yet learned of a new
			// provider: Close already closed the pools it had.
			p.Close(&conn.Error{Code: uint8(ErrClientClosed.Code), Message: ErrClientClosed.Message})
		}
	}
	return p
}

// Close stops watching the registry, deregisters the client's consumer
// entries and closes every connection; calls in flight fail with
// ErrClientClosed. It waits for the client's goroutines.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	svcs := *c.svcs.Load()
	pools, gpools := c.pools, c.gpools
	c.pools, c.gpools = map[string]*conn.Pool{}, map[string]*grpcclient.Pool{}
	c.mu.Unlock()
	for _, st := range svcs {
		st.close()
	}
	closed := &conn.Error{Code: uint8(ErrClientClosed.Code), Message: ErrClientClosed.Message}
	for _, p := range pools {
		p.Close(closed)
	}
	for _, p := range gpools {
		p.Close(closed)
	}
	c.wg.Wait()
	if c.ownReg {
		return c.reg.Close()
	}
	return nil
}

func (c *Client) heartbeats() {
	defer c.wg.Done()
	t := time.NewTicker(c.o.heartbeat / 2)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.mu.Lock()
			pools := make([]*conn.Pool, 0, len(c.pools))
			for _, p := range c.pools {
				pools = append(pools, p)
			}
			c.mu.Unlock()
			for _, p := range pools {
				p.Each(func(cn *conn.Conn) { cn.Heartbeat(now, c.o.heartbeat) })
			}
		}
	}
}

// fromConn turns an error of package conn into an *Error, keeping the
// mark of calls that did not run.
func fromConn(err error) error {
	var ns *conn.NotSent
	notSent := errors.As(err, &ns)
	if notSent {
		err = ns.Err
	}
	var ce *conn.Error
	if errors.As(err, &ce) {
		e := &Error{Code: Code(ce.Code), Message: ce.Message, Remote: ce.Remote, Cause: ce.Cause}
		for _, d := range ce.Details {
			e.Details = append(e.Details, ErrorDetail(d))
		}
		err = e
	} else {
		err = &Error{Code: Unavailable, Message: err.Error(), Cause: err}
	}
	if notSent {
		return &errNotSent{err: err, lost: ns.Lost}
	}
	return err
}

// errNotSent marks failures that happened before the request left this
// process, or that the server refused before running the call: retrying
// them cannot execute the call twice. lost: the connection was lost
// before the request left (see conn.NotSent).
type errNotSent struct {
	err  error
	lost bool
}

func (e *errNotSent) Error() string { return e.err.Error() }
func (e *errNotSent) Unwrap() error { return e.err }

func unwrapNotSent(err error) error {
	var ns *errNotSent
	if errors.As(err, &ns) {
		return ns.err
	}
	return err
}
