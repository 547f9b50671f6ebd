package rt

import "sync"

// workerPool runs calls on reusable goroutines, so a call costs a channel
// hand-off instead of a new goroutine and its closure.
type workerPool struct {
	mu     sync.Mutex
	idle   []chan task
	max    int
	closed bool
}

// task is work for the pool: a call (*serverCall) or a connection's read
// loop (*serverConn).
type task interface{ run() }

func (p *workerPool) run(t task) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 && !p.closed {
		ch := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- t
		return
	}
	p.mu.Unlock()
	go p.work(make(chan task, 1), t)
}

func (p *workerPool) work(ch chan task, t task) {
	for t != nil {
		t.run()
		p.mu.Lock()
		if p.closed || len(p.idle) >= p.max {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
		t = <-ch
	}
}

func (p *workerPool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, ch := range idle {
		close(ch)
	}
}
