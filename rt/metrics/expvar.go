package metrics

import (
	"expvar"
	"fmt"
)

// recorderVar is the expvar.Var of a published Recorder.
type recorderVar struct{ r *Recorder }

func (v recorderVar) String() string {
	return expvar.Func(func() any { return v.r.Snapshot() }).String()
}

// Publish makes the Recorder's Snapshot, as JSON, the expvar variable name,
// served with all the others at /debug/vars once the expvar package's
// handler is mounted (importing expvar registers it on
// http.DefaultServeMux). The snapshot is taken when the variable is read.
//
// Nothing publishes a Recorder but this call: expvar's registry is
// process-wide and has no way to remove a variable, so a name stays taken,
// and the Recorder reachable, for the life of the process. Publishing the
// same Recorder under the same name again does nothing; Publish returns an
// error, not expvar's panic, when name is empty or taken by another
// variable, or when r is nil (as Client.Recorder and Server.Recorder are
// when rt.WithObserver replaced the default Recorder): a nil Recorder's
// variable would panic at every read of /debug/vars.
func (r *Recorder) Publish(name string) (err error) {
	if r == nil {
		return fmt.Errorf("metrics: publish %q: nil Recorder (rt.WithObserver replaces the default one)", name)
	}
	if name == "" {
		return fmt.Errorf("metrics: empty expvar name")
	}
	if v := expvar.Get(name); v != nil {
		if rv, ok := v.(recorderVar); ok && rv.r == r {
			return nil
		}
		return fmt.Errorf("metrics: expvar %q is already published", name)
	}
	// Another goroutine may publish the same name between the check and
	// expvar.Publish, which then panics; report that race as the same error.
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("metrics: expvar %q is already published", name)
		}
	}()
	expvar.Publish(name, recorderVar{r})
	return nil
}
