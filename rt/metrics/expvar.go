package metrics

import (
	"expvar"
	"fmt"
)

// Publish makes the Recorder's Snapshot, as JSON, the expvar variable name,
// served with all the others at /debug/vars once the expvar package's
// handler is mounted (importing expvar registers it on
// http.DefaultServeMux). The snapshot is taken when the variable is read.
//
// expvar's registry is process-wide and has no way to remove a variable: a
// name stays taken for the life of the process. Publish returns an error,
// not expvar's panic, when name is empty or already taken.
func (r *Recorder) Publish(name string) (err error) {
	if name == "" {
		return fmt.Errorf("metrics: empty expvar name")
	}
	if expvar.Get(name) != nil {
		return fmt.Errorf("metrics: expvar %q is already published", name)
	}
	// Another goroutine may publish the same name between the check and
	// expvar.Publish, which then panics; report that race as the same error.
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("metrics: expvar %q is already published", name)
		}
	}()
	expvar.Publish(name, expvar.Func(func() any { return r.Snapshot() }))
	return nil
}
