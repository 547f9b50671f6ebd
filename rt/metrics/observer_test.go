package metrics

import (
	"slices"
	"testing"
)

type recordingObserver struct{ got *[]string }

func (o recordingObserver) Observe(e Event) { *o.got = append(*o.got, e.Method) }

func TestMulti(t *testing.T) {
	var a, b, c []string
	oa, ob, oc := recordingObserver{&a}, recordingObserver{&b}, recordingObserver{&c}

	m := Multi(oa, nil, Discard{}, Multi(ob, oc))
	if n := len(m.(multi)); n != 3 {
		t.Fatalf("Multi flattened to %d observers, want 3", n)
	}
	m.Observe(Event{Method: "M"})
	for _, got := range [][]string{a, b, c} {
		if !slices.Equal(got, []string{"M"}) {
			t.Errorf("observer got %v, want [M]", got)
		}
	}

	if _, ok := Multi().(Discard); !ok {
		t.Error("Multi() is not Discard")
	}
	if _, ok := Multi(nil, Discard{}).(Discard); !ok {
		t.Error("Multi(nil, Discard{}) is not Discard")
	}
	if o, ok := Multi(nil, oa).(recordingObserver); !ok || o != oa {
		t.Error("Multi of one observer is not that observer")
	}
}

func TestObserverFunc(t *testing.T) {
	var n int
	ObserverFunc(func(Event) { n++ }).Observe(Event{})
	if n != 1 {
		t.Errorf("ObserverFunc called %d times, want 1", n)
	}
	ObserverFunc(nil).Observe(Event{}) // does nothing
}

func TestSideString(t *testing.T) {
	for s, want := range map[Side]string{Client: "client", Server: "server", 0: "unknown", 9: "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("Side(%d).String() = %q, want %q", s, got, want)
		}
	}
}
