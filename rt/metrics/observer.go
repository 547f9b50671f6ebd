package metrics

// ObserverFunc adapts a function to an Observer. It is as safe for
// concurrent use as the function; a nil ObserverFunc drops every event.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) {
	if f != nil {
		f(e)
	}
}

// Discard is an Observer that drops every event. Its zero value is ready to
// use, and it is safe for concurrent use.
type Discard struct{}

// Observe does nothing.
func (Discard) Observe(Event) {}

// multi is the fan-out Multi returns.
type multi []Observer

func (m multi) Observe(e Event) {
	for _, o := range m {
		o.Observe(e)
	}
}

// Multi returns an Observer that passes every event to each of obs, in
// order. Nil observers and Discard are skipped and nested Multi observers are
// flattened; with nothing left Multi returns Discard{}, and with one observer
// it returns that observer itself. The result is as safe for concurrent use
// as the observers it wraps.
func Multi(obs ...Observer) Observer {
	var flat multi
	for _, o := range obs {
		switch o := o.(type) {
		case nil, Discard:
		case multi:
			flat = append(flat, o...)
		default:
			flat = append(flat, o)
		}
	}
	switch len(flat) {
	case 0:
		return Discard{}
	case 1:
		return flat[0]
	}
	return flat
}
