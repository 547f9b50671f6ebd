package impl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// The reference lines move the workload's encoded request and reply in
// frames of a 4-byte big-endian length and the payload, with no codec, no
// dispatch and no call bookkeeping.

const (
	frameHeader = 4
	maxFrame    = 1 << 16
	rawBufSize  = 32 << 10
)

func pingPongImpl() *Impl {
	return &Impl{
		Name:  "tcp-pingpong",
		Label: "TCP ping-pong (reference)",
		Ref:   true,
		Serve: serveEcho,
		Dial:  dialPingPong,
		// One connection per worker: the round-trip floor of each.
		ConnPerWorker: true,
	}
}

func pipelineImpl() *Impl {
	return &Impl{
		Name:  "tcp-pipeline",
		Label: "TCP pipelined echo (reference)",
		Ref:   true,
		Serve: serveEcho,
		Dial:  dialPipeline,
	}
}

// rawPayloads returns the framed request and reply of size bytes
// (workload.NewSized): the protobuf encodings of the workload's messages.
func rawPayloads(size int) (req, reply []byte, err error) {
	m, err := workload.NewSized(size)
	if err != nil {
		return nil, nil, err
	}
	reqMsg, err := proto.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	repMsg, err := proto.Marshal(workload.Answer(m))
	if err != nil {
		return nil, nil, err
	}
	return appendFrame(nil, reqMsg), appendFrame(nil, repMsg), nil
}

// frameBuf returns a buffer for reading frames of up to n payload bytes:
// at least maxFrame.
func frameBuf(n int) []byte { return make([]byte, max(n, maxFrame)) }

// appendFrame appends p as one frame to b.
func appendFrame(b, p []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
	return append(b, p...)
}

// readFrame reads one frame from r into buf and returns its payload, a
// sub-slice of buf. A frame longer than buf is an error.
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, buf[:frameHeader]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(buf[:frameHeader])
	if uint64(n) > uint64(len(buf)) {
		return nil, fmt.Errorf("impl: frame of %d bytes exceeds %d", n, len(buf))
	}
	if _, err := io.ReadFull(r, buf[:n]); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// serveEcho answers every request frame with the reply frame, flushing
// only when no more input is buffered.
func serveEcho(ctx context.Context, lis net.Listener, o Options) error {
	reqFrame, replyFrame, err := rawPayloads(o.Size)
	if err != nil {
		return err
	}
	want := reqFrame[frameHeader:]
	return serveTCP(ctx, lis, func(conn net.Conn) {
		br := bufio.NewReaderSize(conn, rawBufSize)
		bw := bufio.NewWriterSize(conn, rawBufSize)
		buf := frameBuf(len(want))
		for {
			p, err := readFrame(br, buf)
			if err != nil || len(p) != len(want) {
				return
			}
			if _, err := bw.Write(replyFrame); err != nil {
				return
			}
			if br.Buffered() == 0 {
				if err := bw.Flush(); err != nil {
					return
				}
			}
		}
	})
}

// serveTCP accepts connections on lis and runs handle on each in its own
// goroutine until ctx ends; then it closes lis and every connection and
// waits for the handlers.
func serveTCP(ctx context.Context, lis net.Listener, handle func(net.Conn)) error {
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	stop := context.AfterFunc(ctx, func() {
		_ = lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			_ = c.Close()
		}
	})
	defer stop()
	var err error
	for {
		var conn net.Conn
		conn, err = lis.Accept()
		if err != nil {
			break
		}
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			_ = conn.Close()
			continue
		}
		conns[conn] = struct{}{}
		mu.Unlock()
		wg.Go(func() {
			handle(conn)
			mu.Lock()
			delete(conns, conn)
			mu.Unlock()
			_ = conn.Close()
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// pingPong has one connection per worker; a call writes the request frame
// and reads the reply frame.
type pingPong struct {
	conns    []net.Conn
	readers  []*bufio.Reader
	bufs     [][]byte
	reqFrame []byte
	want     []byte
}

func dialPingPong(ctx context.Context, addr string, o Options) (harness.Client, error) {
	addr, err := oneAddr("tcp-pingpong", addr)
	if err != nil {
		return nil, err
	}
	reqFrame, replyFrame, err := rawPayloads(o.Size)
	if err != nil {
		return nil, err
	}
	pp := &pingPong{reqFrame: reqFrame, want: replyFrame[frameHeader:]}
	var dialer net.Dialer
	for range o.workers() {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			_ = pp.Close()
			return nil, err
		}
		pp.conns = append(pp.conns, conn)
		pp.readers = append(pp.readers, bufio.NewReaderSize(conn, 4<<10))
		pp.bufs = append(pp.bufs, frameBuf(len(pp.want)))
	}
	return pp, nil
}

func (pp *pingPong) Call(_ context.Context, w int) error {
	if _, err := pp.conns[w].Write(pp.reqFrame); err != nil {
		return err
	}
	p, err := readFrame(pp.readers[w], pp.bufs[w])
	if err != nil {
		return err
	}
	if !bytes.Equal(p, pp.want) {
		return errors.New("impl: bad reply frame")
	}
	return nil
}

func (pp *pingPong) Close() error { return closeAll(pp.conns) }

// pipeline sends requests on one connection from a writer goroutine while
// a reader goroutine takes the replies, with at most c requests in flight.
// The writer flushes only when it may not send more. It is a Driver: the
// harness does not call Call.
type pipeline struct {
	conn     net.Conn
	reqFrame []byte
	want     []byte
}

func dialPipeline(ctx context.Context, addr string, o Options) (harness.Client, error) {
	addr, err := oneAddr("tcp-pipeline", addr)
	if err != nil {
		return nil, err
	}
	reqFrame, replyFrame, err := rawPayloads(o.Size)
	if err != nil {
		return nil, err
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &pipeline{conn: conn, reqFrame: reqFrame, want: replyFrame[frameHeader:]}, nil
}

// Call is not used: the harness runs a Driver through Drive.
func (p *pipeline) Call(context.Context, int) error {
	return errors.New("impl: the pipeline runs through Drive, not Call")
}

// Drive implements harness.Driver.
func (p *pipeline) Drive(ctx context.Context, c int, lat []time.Duration) (int, error) {
	n := len(lat)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &window{
		size: int64(c),
		base: time.Now(),
		sent: make([]atomic.Int64, c),
		wake: make(chan struct{}, 1),
	}
	writeErr := make(chan error, 1)
	go func() {
		writeErr <- p.write(ctx, n, w)
	}()

	br := bufio.NewReaderSize(p.conn, rawBufSize)
	buf := frameBuf(len(p.want))
	var err error
	done := 0
	for ; done < n; done++ {
		var frame []byte
		frame, err = readFrame(br, buf)
		if err == nil && !bytes.Equal(frame, p.want) {
			err = errors.New("impl: bad reply frame")
		}
		if err != nil {
			break
		}
		lat[done] = time.Since(w.base) - time.Duration(w.sent[done%c].Load())
		w.release()
	}
	cancel()
	if werr := <-writeErr; err == nil && werr != nil && !errors.Is(werr, context.Canceled) {
		err = werr
	}
	if err != nil {
		return n - done, err
	}
	return 0, nil
}

// window bounds the requests in flight without a channel operation per
// request: the writer counts what it sent, the reader what came back, and
// the writer sleeps on wake only when the window is full.
type window struct {
	size    int64
	base    time.Time
	sent    []atomic.Int64 // send time of request i, in slot i%size
	done    atomic.Int64   // replies read
	waiting atomic.Bool    // the writer sleeps, or is about to
	wake    chan struct{}
}

// release records one reply and wakes the writer if it waits.
func (w *window) release() {
	w.done.Add(1)
	if w.waiting.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// acquire waits until request i may be sent; flush runs before sleeping.
func (w *window) acquire(ctx context.Context, i int64, flush func() error) error {
	if i-w.done.Load() < w.size {
		return nil
	}
	// The window is full: push out what is buffered and wait.
	if err := flush(); err != nil {
		return err
	}
	for {
		w.waiting.Store(true)
		if i-w.done.Load() < w.size {
			w.waiting.Store(false)
			return nil
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// write sends n requests, each when the window allows.
func (p *pipeline) write(ctx context.Context, n int, w *window) error {
	bw := bufio.NewWriterSize(p.conn, rawBufSize)
	for i := range n {
		if err := w.acquire(ctx, int64(i), bw.Flush); err != nil {
			return err
		}
		w.sent[i%int(w.size)].Store(int64(time.Since(w.base)))
		if _, err := bw.Write(p.reqFrame); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func (p *pipeline) Close() error { return p.conn.Close() }
