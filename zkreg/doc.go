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
//	/yrpc/<service>/<group>/<version>/config                    persistent, JSON registry.Config (empty: none)
//
// The endpoint payload is registry.Endpoint's JSON, for example
// {"addr":"10.0.0.1:7001","weight":100,"app":"users","tags":{"zone":"hk-1"},"start_time":"2026-01-02T03:04:05Z",
// "payload_version":1,"tls":true,"token":"…","methods":["Get","List"],"protocols":["yrpc","grpc"]}.
// Writers stamp payload_version (registry.PayloadVersion); readers ignore
// fields they do not know. A consumer skips, and logs at Warn, a payload
// over registry.MaxPayloadSize (16 KiB), of a newer major version, whose
// addr is not host:port with a port in 1..65535 or differs from the
// unescaped node name, or whose weight is outside 0..registry.MaxWeight
// (10000). The intermediate nodes are persistent and created on demand; a
// key's node is created together with its config, providers and consumers
// nodes (one transaction), so a key never lacks its config node. A config
// change that leaves the config empty in a key without endpoints deletes
// the key's nodes (and empty group and service nodes), so that `yrpcc ctl
// ls` does not list it.
//
// # Who can do what
//
// Without Options.ACL every node is open to everyone: any process that
// reaches ZooKeeper can register itself as a provider of any service (and
// receive its traffic), change or delete other providers' nodes, and
// drain, mock or rate-limit any service. That is for development only.
//
// A locked-down registry gives every process an identity and one ACL
// policy (Options.ACL; DigestPolicy with Roles is the ready one, in the
// spirit of Apache Curator's ACLProvider). An identity is either a digest
// credential (Options.Auth, ZooKeeper's digest auth, presented again after
// every reconnection and session expiry), or a TLS client certificate
// (Options.TLS) to a ZooKeeper that authenticates clients by certificate:
//
//	secureClientPort=2281
//	serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
//	ssl.keyStore.location=… ssl.trustStore.location=… (the CA of the clients)
//	ssl.clientAuth=need
//	authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
//
// ZooKeeper then gives every TLS client the x509 identity of its
// certificate's subject DN, which Roles name as "x509:CN=web,O=shop"
// (X509ID computes it; ZooKeeper logs it: "Authenticated Id '…' for Scheme
// 'x509'"). Roles may mix digest and x509 ids. Under DigestPolicy:
//
//   - everyone (consumers need no credential) reads every node: provider
//     lists, payloads with their tokens, config;
//   - only the providers' identity (and operators) creates, changes or
//     deletes provider nodes and the structure nodes above them;
//   - only the operators' identity (`yrpcc ctl --auth` or --zk-tls-cert)
//     writes governance config; it may change or delete any node;
//   - anyone (or only Roles.Consumers) registers consumer nodes, which are
//     informational (`yrpcc ctl ls`).
//
// ZooKeeper enforces this per node, whatever client writes: a process
// without the providers' credential or certificate, including one with
// another certificate of the same CA, gets "not authenticated"
// (zk.ErrNoAuth) when it creates, changes or deletes a provider node, or
// writes config.
// What it does not stop: anyone who holds the providers' credential can
// register any service (per-service provider identities would need one
// Roles per service), and can create a new key with a config node of its
// own, or the config node of a key created before its config node existed
// (ZooKeeper grants CREATE per parent node, not per child name, and shows
// digest ids in ACLs only to clients with ADMIN permission, so consumers
// cannot check who may write a config node); ACLs protect only nodes
// created under the policy
// (New warns when the root is writable by everyone; lock an old tree with
// zkCli's setAcl -R); digest credentials travel in plaintext unless
// Options.TLS is set; any certificate the ZooKeeper's trust store accepts
// with a role's subject DN has the role (give ZooKeeper a CA of its own,
// or one that never issues two holders the same subject); and ZooKeeper's
// own superuser and administrators can do everything. A ZooKeeper that
// also serves a plaintext clientPort lets clients without a certificate
// in as the world identity: they read, and register consumers unless
// Roles.Consumers is set, like any client without a role.
//
// A registry token (registry.Endpoint.Token, Dubbo style) is published in
// the provider's node and required by the provider on every call. It stops
// callers that bypass the registry (dialing a provider's address from a
// list or a scan); it does not stop callers who can read the registry,
// which is everyone under this policy, so it authenticates no one. It may
// travel in plaintext only to providers whose payload does not require TLS.
//
// TLS to ZooKeeper (Options.TLS) runs every connection over TLS to the
// server's secureClientPort (ZooKeeper 3.5 and later, Netty connection
// factory); the tests run it against Debian's ZooKeeper 3.8.
//
// # Failure rules
//
//   - Providers: a node lives as long as the session. When the session
//     expires, the registry gets a new one and creates every registered
//     node again. A node of the same path owned by another session
//     (Stat.EphemeralOwner) is replaced by ours in one transaction, so it
//     cannot vanish later when the old session finally expires, and a
//     watcher never lists the key without it in between (providers that
//     start new sessions together, as after a ZooKeeper outage, would
//     otherwise all be missing for a moment). A node deleted
//     behind the provider's back while its session lives (an operator, a
//     tool) is created again; one that another live session took over
//     meanwhile is left to it and logged, so two processes claiming one
//     address never fight.
//   - A registration whose request is lost with its connection (go-zk's
//     "connection closed" or "could not connect to a server") is tried
//     again on the next connection for up to a session timeout, so a
//     blip during a provider's start does not fail it.
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
//     is given up after the session timeout divided by the number of
//     server addresses, as the Java client does (go-zk alone waits 6.7
//     session timeouts), and go-zk tries the next server: New gets a
//     session within about one session timeout while any server answers.
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
//     once) and waits for every goroutine, go-zk's included. Watchers keep
//     their last snapshot; Done (registry.CloseNotifier) tells them the
//     registry closed, and Watch after Close returns registry.ErrClosed.
//
// When no server answers, New's error names the servers and the last
// connection error ("connection refused", a TLS handshake failure) rather
// than only "context deadline exceeded"; Options.FailFast makes it give up
// after one round of every server, for command-line tools.
//
// Governance config is written with the znode version as compare-and-set
// (UpdateConfig retries on a concurrent writer) and watched by every
// watcher of the Key: it arrives in the next Snapshot, typically within
// milliseconds. Package zkctl implements `yrpcc ctl` on top of List and
// UpdateConfig.
package zkreg
