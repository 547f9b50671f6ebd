package rt

import (
	"sync"
	"sync/atomic"
)

// heldBytes accounts the request bytes that calls in flight hold, against
// a limit, and lets readers wait until they fall back under it. The zero
// value has no limit. It is safe for concurrent use.
type heldBytes struct {
	limit int64 // 0: none
	n     atomic.Int64

	mu    sync.Mutex
	freed chan struct{} // closed and replaced when n falls back to the limit
}

func newHeldBytes(limit int) *heldBytes {
	return &heldBytes{limit: int64(limit), freed: make(chan struct{})}
}

func (h *heldBytes) add(n int) { h.n.Add(int64(n)) }

func (h *heldBytes) release(n int) {
	now := h.n.Add(-int64(n))
	if h.limit > 0 && now <= h.limit && now+int64(n) > h.limit {
		h.mu.Lock()
		close(h.freed)
		h.freed = make(chan struct{})
		h.mu.Unlock()
	}
}

// over returns, when more than the limit is held, a channel closed once it
// is not; nil when the limit holds.
func (h *heldBytes) over() <-chan struct{} {
	if h.limit == 0 || h.n.Load() <= h.limit {
		return nil // the common case, without the lock all readers share
	}
	h.mu.Lock()
	ch := h.freed // taken before the check: a release after it closes ch
	h.mu.Unlock()
	if h.n.Load() <= h.limit {
		return nil
	}
	return ch
}
