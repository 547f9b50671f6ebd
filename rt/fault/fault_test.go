package fault

import (
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rule
		bad  bool
	}{
		{in: "delay=20ms", want: Rule{Delay: 20 * time.Millisecond}},
		{in: "abort=Unavailable:gone", want: Rule{Abort: rt.Unavailable, Message: "gone"}},
		{in: "drop", want: Rule{Drop: true}},
		{in: "delay=1s; abort=NotFound", want: Rule{Delay: time.Second, Abort: rt.NotFound}},
		{in: "delay=soon", bad: true},
		{in: "abort=Nope", bad: true},
		{in: "abort=OK", bad: true},
		{in: "explode", bad: true},
	} {
		got, err := Parse(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}
