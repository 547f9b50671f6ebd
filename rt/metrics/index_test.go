package metrics

import "testing"

func TestIndexPromotes(t *testing.T) {
	var x index
	newSeries := func() *series { return &series{} }
	keys := []seriesKey{{service: "a"}, {service: "b"}, {service: "c"}}
	added := map[seriesKey]*series{}
	for _, k := range keys {
		if x.get(k) != nil {
			t.Fatalf("get(%v) found a series before it was added", k)
		}
		added[k] = x.getOrAdd(k, -1, newSeries)
	}
	// Lookups that miss the read map move the new series into it.
	for range len(keys) {
		for _, k := range keys {
			if s := x.get(k); s == nil {
				if s = x.getOrAdd(k, -1, newSeries); s != added[k] {
					t.Fatalf("getOrAdd(%v) returned a new series", k)
				}
			}
		}
	}
	for _, k := range keys {
		if s := x.get(k); s != added[k] {
			t.Errorf("get(%v) after promotion = %p, want %p", k, s, added[k])
		}
	}
	n := 0
	x.all(func(seriesKey, *series) { n++ })
	if n != len(keys) {
		t.Errorf("all visited %d series, want %d", n, len(keys))
	}
	if s := x.getOrAdd(seriesKey{service: "d"}, len(keys), newSeries); s != nil {
		t.Error("getOrAdd added a series beyond the limit")
	}
}
