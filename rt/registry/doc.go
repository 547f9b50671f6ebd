// Package registry defines how yrpc providers announce themselves and how
// consumers find them, and holds two in-process implementations.
//
// A Registry stores Endpoints (providers and consumers) under a Key
// (service, group, version) and delivers whole Snapshots of a Key to
// watchers. A Governor reads and writes the governance Config of a Key
// (rate limits, per-instance weights and draining, mocks).
//
// Implementations:
//
//   - Memory: an in-process store for examples, unit tests and the tour. Its
//     Conn method gives each simulated process its own handle, the way each
//     process has its own ZooKeeper session.
//   - Static: a fixed provider list (no discovery, no governance).
//   - dns.Registry (package rt/registry/dns): providers from DNS A/AAAA or
//     SRV records, re-resolved on a period (Kubernetes headless services);
//     registering is a no-op there.
//   - zkreg.Registry (package github.com/yrpc/yrpc/zkreg): ZooKeeper.
//
// An Endpoint is also the payload a provider publishes: its address,
// weight, app, tags and start time, and (payload version 1) whether it
// requires TLS, its registry token, its methods and its protocols. Stores
// shared between processes (zkreg) stamp PayloadVersion and check every
// payload they read with Endpoint.Validate and MaxPayloadSize before a
// consumer may route to it; unknown fields are ignored.
//
// Close ends a registry's watches without a last snapshot, so watchers keep
// the providers they knew. A registry may also implement CloseNotifier,
// whose Done channel tells watchers that it closed (rt's calls waiting for
// a service's first providers then fail at once instead of waiting out
// their discovery wait); all the implementations above do.
//
// Feed is the building block every implementation uses to deliver
// snapshots: one goroutine per watch, coalescing bursts so a slow watcher
// gets the latest snapshot and never a backlog. Package registrytest holds
// the conformance suite that every Registry passes.
package registry
