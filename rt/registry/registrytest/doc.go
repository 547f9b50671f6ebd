// Package registrytest is the conformance suite for registry.Registry
// implementations: Run checks registration, watching, sorting, group and
// version isolation, payload replacement, Close (which ends watches
// silently, and closes Done for registry.CloseNotifier implementations),
// stop semantics, coalescing of slow watchers and, for registry.Governor
// implementations, atomic config updates under concurrent writers.
//
//	func TestConformance(t *testing.T) {
//		m := registry.NewMemory()
//		registrytest.Run(t, func(*testing.T) registry.Registry { return m.Conn() })
//	}
package registrytest
