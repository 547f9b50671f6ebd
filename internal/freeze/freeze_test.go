package freeze

import (
	"context"
	"testing"
	"time"
)

// TestRecord feeds gaps and checks the longest and the list, its
// threshold and bound.
func TestRecord(t *testing.T) {
	w := New(100*time.Millisecond, 2)
	for _, g := range []time.Duration{time.Millisecond, 150 * time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond} {
		w.record(w.start.Add(time.Second), g)
	}
	if got := w.Longest(); got != 300*time.Millisecond {
		t.Errorf("Longest = %v, want 300ms", got)
	}
	got := w.Freezes()
	if len(got) != 2 || got[0].Len != 150*time.Millisecond || got[1].Len != 300*time.Millisecond || got[0].At != time.Second {
		t.Errorf("Freezes = %+v, want the 150ms and 300ms ones at 1s", got)
	}
	if n := len(New(0, 10).Freezes()); n != 0 {
		t.Errorf("a watcher without a threshold lists %d", n)
	}
}

// TestRun runs a watcher briefly: it stops with its context.
func TestRun(t *testing.T) {
	w := New(time.Hour, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	cancel()
	<-done
	if len(w.Freezes()) != 0 {
		t.Errorf("freezes of an hour listed: %+v", w.Freezes())
	}
}
