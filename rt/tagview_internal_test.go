package rt

import (
	"strconv"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
)

// TestUnknownTagsAreNotRemembered routes calls by many distinct tag
// values that no provider has: each falls back to every provider, and the
// view does not keep one entry per value (it would grow without bound
// while the provider list is stable).
func TestUnknownTagsAreNotRemembered(t *testing.T) {
	v := &svcView{
		eps:   []*endpoint{{addr: "a:1"}, {addr: "b:1"}},
		nodes: []balance.Node{{Addr: "a:1"}, {Addr: "b:1"}},
		tags:  []map[string]string{{"zone": "x"}, nil},
	}
	now := time.Unix(1_700_000_000, 0)
	v.build(balance.NewRoundRobin(balance.Options{}), now)
	for i := range 1000 {
		if got := v.withTag("user", strconv.Itoa(i), now); got != v {
			t.Fatalf("an unknown tag got a narrowed view of %d providers", len(got.eps))
		}
	}
	if got := v.withTag("zone", "x", now); len(got.eps) != 1 || got.eps[0].addr != "a:1" {
		t.Fatalf("zone=x: %d providers", len(got.eps))
	}
	n := 0
	v.tagged.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("the view remembers %d tag views; want 1 (zone=x)", n)
	}
}
