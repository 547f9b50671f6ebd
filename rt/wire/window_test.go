package wire

import (
	"errors"
	"fmt"
	"testing"
)

func TestMessageCost(t *testing.T) {
	for _, c := range []struct{ body, want int }{{0, 17}, {1, 18}, {1000, 1017}, {-5, 17}} {
		if got := MessageCost(c.body); got != c.want {
			t.Errorf("MessageCost(%d) = %d, want %d", c.body, got, c.want)
		}
	}
}

func TestSendWindow(t *testing.T) {
	type step struct {
		op       string // "spend" or "grant"
		n        int
		wantErr  bool
		credit   int64
		wantOpen bool
	}
	for _, c := range []struct {
		name    string
		initial int
		steps   []step
	}{
		{"spend within", 100, []step{
			{"spend", 40, false, 60, true},
			{"spend", 60, false, 0, false},
			{"grant", 10, false, 10, true},
		}},
		{"overdraft by one large message", 100, []step{
			{"spend", 10, false, 90, true},
			{"spend", 1000, false, -910, false},
			{"grant", 500, false, -410, false},
			{"grant", 411, false, 1, true},
		}},
		{"no credit to start", 0, []step{
			{"grant", 5, false, 5, true},
		}},
		{"zero increment", 10, []step{
			{"grant", 0, true, 10, true},
		}},
		{"grant to the maximum", MaxWindow - 10, []step{
			{"grant", 10, false, MaxWindow, true},
			{"grant", 1, true, MaxWindow, true},
		}},
		{"grant past the maximum", 10, []step{
			{"grant", MaxWindow, true, 10, true},
			{"spend", 20, false, -10, false},
			{"grant", MaxWindow, false, MaxWindow - 10, true},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := NewSendWindow(c.initial)
			for i, s := range c.steps {
				var err error
				if s.op == "spend" {
					w.Spend(s.n)
				} else {
					err = w.Grant(uint32(s.n))
				}
				if (err != nil) != s.wantErr || err != nil && !errors.Is(err, ErrFlowControl) {
					t.Fatalf("step %d (%s %d): error %v, want error %t", i, s.op, s.n, err, s.wantErr)
				}
				if w.Credit() != s.credit || w.Open() != s.wantOpen {
					t.Fatalf("step %d (%s %d): credit %d open %t, want %d %t", i, s.op, s.n, w.Credit(), w.Open(), s.credit, s.wantOpen)
				}
			}
		})
	}
}

func TestRecvWindow(t *testing.T) {
	type step struct {
		op       string // "recv", "consume" or "flush"
		n        int
		want     uint32 // increment from consume or flush
		wantErr  bool   // from recv
		credit   int64
		buffered int64
	}
	for _, c := range []struct {
		name  string
		size  int
		steps []step
	}{
		{"updates batch to a quarter", 100, []step{
			{op: "recv", n: 10, credit: 90, buffered: 10},
			{op: "consume", n: 10, want: 0, credit: 90},
			{op: "recv", n: 20, credit: 70, buffered: 20},
			{op: "consume", n: 14, want: 0, credit: 70, buffered: 6},
			{op: "consume", n: 1, want: 25, credit: 95, buffered: 5},
			{op: "consume", n: 5, want: 0, credit: 95},
			{op: "flush", want: 5, credit: 100},
			{op: "flush", want: 0, credit: 100},
		}},
		{"sender out of credit gets an update at once", 100, []step{
			{op: "recv", n: 100, credit: 0, buffered: 100},
			{op: "recv", n: 1, wantErr: true, credit: 0, buffered: 100},
			{op: "consume", n: 1, want: 1, credit: 1, buffered: 99},
			{op: "consume", n: 1, want: 0, credit: 1, buffered: 98},
		}},
		{"overdraft: no update that would not let the sender send", 100, []step{
			{op: "recv", n: 50, credit: 50, buffered: 50},
			{op: "recv", n: 1000, credit: -950, buffered: 1050},
			{op: "recv", n: 1, wantErr: true, credit: -950, buffered: 1050},
			{op: "consume", n: 50, want: 0, credit: -950, buffered: 1000},
			{op: "consume", n: 900, want: 0, credit: -950, buffered: 100},
			{op: "consume", n: 1, want: 951, credit: 1, buffered: 99},
			{op: "consume", n: 99, want: 99, credit: 100},
		}},
		{"consume more than buffered", 100, []step{
			{op: "recv", n: 30, credit: 70, buffered: 30},
			{op: "consume", n: 500, want: 30, credit: 100},
			{op: "consume", n: 5, want: 0, credit: 100},
		}},
		{"window of one byte", 1, []step{
			{op: "recv", n: 17, credit: -16, buffered: 17},
			{op: "consume", n: 17, want: 17, credit: 1},
		}},
		{"no window", 0, []step{
			{op: "recv", n: 1, wantErr: true},
			{op: "consume", n: 1, want: 0},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := NewRecvWindow(c.size)
			for i, s := range c.steps {
				var got uint32
				var err error
				switch s.op {
				case "recv":
					err = w.Receive(s.n)
				case "consume":
					got = w.Consume(s.n)
				case "flush":
					got = w.Flush()
				}
				desc := fmt.Sprintf("step %d (%s %d)", i, s.op, s.n)
				if (err != nil) != s.wantErr || err != nil && !errors.Is(err, ErrFlowControl) {
					t.Fatalf("%s: error %v, want error %t", desc, err, s.wantErr)
				}
				if got != s.want || w.Credit() != s.credit || w.Buffered() != s.buffered {
					t.Fatalf("%s: increment %d credit %d buffered %d, want %d %d %d", desc, got, w.Credit(), w.Buffered(), s.want, s.credit, s.buffered)
				}
			}
		})
	}
}

// TestWindowsTogether runs a sender and a receiver against each other
// with a reader that consumes in bursts: the sender never sends without
// credit, the receiver never refuses, and the receiver never holds more
// than the window plus one message.
func TestWindowsTogether(t *testing.T) {
	const size = 1000
	for _, msg := range []int{1, 100, 999, 5000} {
		t.Run(fmt.Sprint(msg), func(t *testing.T) {
			send, recv := NewSendWindow(size), NewRecvWindow(size)
			var inFlight []int // messages sent, not yet received
			var grants []uint32
			sent, consumed := 0, 0
			for round := 0; consumed < 200; round++ {
				if round > 10000 {
					t.Fatalf("stuck after %d messages", consumed)
				}
				for send.Open() && len(inFlight) < 50 {
					send.Spend(MessageCost(msg))
					inFlight = append(inFlight, MessageCost(msg))
					sent++
				}
				for _, cost := range inFlight {
					if err := recv.Receive(cost); err != nil {
						t.Fatalf("message %d refused: %v", sent, err)
					}
				}
				inFlight = inFlight[:0]
				if b := recv.Buffered(); b > size+int64(MessageCost(msg)) {
					t.Fatalf("receiver holds %d bytes", b)
				}
				for k := 0; k < 3 && recv.Buffered() > 0; k++ { // a burst of reads
					if inc := recv.Consume(MessageCost(msg)); inc != 0 {
						grants = append(grants, inc)
					}
					consumed++
				}
				for _, g := range grants {
					if err := send.Grant(g); err != nil {
						t.Fatal(err)
					}
				}
				grants = grants[:0]
			}
		})
	}
}
