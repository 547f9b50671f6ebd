// Package zkreg is a registry.Registry and registry.Governor on Apache
// ZooKeeper (github.com/go-zookeeper/zk).
//
// # Layout
//
// Under Options.Root (default /yrpc), every Key has a node
// /yrpc/<service>/<group>/<version>, where an empty group or version is
// "_default" (so a group literally named "_default" is the default group)
// and every segment is URL-path-escaped (a leading "." becomes "%2E"):
//
//	/yrpc/<service>/<group>/<version>/providers/<escaped addr>  ephemeral, JSON endpoint
//	/yrpc/<service>/<group>/<version>/consumers/<escaped addr>  ephemeral, JSON endpoint
//	/yrpc/<service>/<group>/<version>/config                    persistent, JSON registry.Config
//
// The endpoint payload is registry.Endpoint's JSON, for example
// {"addr":"10.0.0.1:7001","weight":100,"app":"users","tags":{"zone":"hk-1"},"start_time":"2026-01-02T03:04:05Z"}.
// Its addr must equal the unescaped node name; nodes with a bad payload are
// skipped and logged. The intermediate nodes are persistent and created on
// demand.
//
// # Failure rules
//
//   - Providers: a node lives as long as the session. When the session
//     expires, the registry gets a new one and creates every registered
//     node again. A node of the same path owned by another session
//     (Stat.EphemeralOwner) is deleted and created anew, so it cannot
//     vanish later when the old session finally expires. A node deleted
//     behind the provider's back while its session lives (an operator, a
//     tool) is created again; one that another live session took over
//     meanwhile is left to it and logged, so two processes claiming one
//     address never fight.
//   - A connection without a session for 1.5 session timeouts is replaced
//     by a new one, which starts a new session (logged at Warn). go-zk
//     gives a session up only when a server answers that it expired, but a
//     ZooKeeper restarted with an empty data dir refuses every client that
//     has seen a later zxid than its own ("client must try another
//     server"), so go-zk would retry the old session for ever. By then a
//     live server has expired the session anyway: the new session creates
//     every registered node again and every watcher re-lists, as after an
//     expiry. (After an outage of the whole ensemble longer than that, the
//     old session may still be alive on the server: its nodes are replaced
//     by the new session's.)
//   - A server that accepts a connection but does not answer its handshake
//     is given up after one session timeout (go-zk alone waits 6.7 times
//     as long), and go-zk tries the next server.
//   - Session events: go-zk's event channel holds 6 events and drops the
//     rest. The registry never depends on it: an event callback pokes a
//     loop that reads the connection's current state and session id, so
//     any burst of events converges on the latest state.
//   - Consumers: each watched Key keeps a cache (children, payloads, config)
//     kept current by ZooKeeper watches. A disconnect changes nothing: the
//     cache is kept and ZooKeeper restores the watches on reconnection, so
//     a disconnect shorter than the session causes no remove/add flap. While
//     ZooKeeper is unreachable, watchers keep the last snapshot.
//   - A failed listing never changes the cache; it is retried with backoff.
//   - An empty listing is trusted only when ZooKeeper answered it within a
//     valid session, and even then the last providers are kept for
//     Options.EmptyGrace (default: the session timeout), because an empty
//     list is also what consumers see for a moment when providers are
//     re-registering after their sessions expired (a ZooKeeper restarted
//     empty expires every session). Providers "really left" when the list
//     stays empty for the grace period; a partial departure (3 providers
//     to 2) is applied at once.
//   - Bursts: every ZooKeeper watch pokes a one-slot channel; a burst of
//     events costs one re-list, which reads only the nodes whose watch
//     fired.
//   - Close closes the session (ZooKeeper deletes its ephemeral nodes at
//     once) and waits for every goroutine, go-zk's included.
//
// Governance config is written with the znode version as compare-and-set
// (UpdateConfig retries on a concurrent writer) and watched by every
// watcher of the Key: it arrives in the next Snapshot, typically within
// milliseconds. Package zkctl implements `yrpcc ctl` on top of List and
// UpdateConfig.
package zkreg
