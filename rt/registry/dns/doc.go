// Package dns is a registry.Registry that discovers providers through DNS,
// for Kubernetes headless Services and any other name whose records list a
// service's instances. It is yrpc's third embedded registry, beside
// registry.Memory and registry.Static (ZooKeeper is zkreg).
//
// A watched registry.Key is mapped to a DNS name (Options.Name; by default
// DefaultName, one label such as "shop-catalog", completed by the
// resolver's search domains) and resolved at once and then every
// Options.Period (30 s by default):
//
//   - A and AAAA records (the default): every address is a provider on
//     Options.Port. A headless Service answers with the addresses of its
//     ready pods.
//   - SRV records (Options.SRV): every record of the lowest priority is a
//     provider at its target and port, with its weight; Options.SRVService
//     names a Kubernetes named port ("_yrpc._tcp.<name>"). Targets are kept
//     as names (the client resolves them when it dials).
//
// The first lookup is always delivered, even an empty or failed one, so a
// client learns at once that there is nothing to call yet. After that the
// watch callback runs only when the set of providers (address and weight)
// changes; a lookup that fails or finds nothing keeps the last non-empty
// answer, so a DNS outage never empties a client's provider list. The flip
// side: when every provider is really gone the list keeps the last
// addresses, whose calls then fail and trip their breakers.
//
// DNS carries no governance: snapshots have a zero Config, and Register
// and Deregister do nothing (the platform publishes providers: Kubernetes
// adds a pod to its Service's records when it is ready). They succeed, so
// that one Registry serves a process that both calls and serves; give a
// server that must announce itself another registry.
//
// The resolver (net.DefaultResolver by default; any Resolver, such as a
// *net.Resolver with its own Dial) and the ticker that paces the lookups
// are options, so tests run without a network and without waiting. Each
// lookup is bounded by Options.LookupTimeout (5 s by default) and failures
// are logged as warnings to Options.Logger (slog.Default() by default).
package dns
