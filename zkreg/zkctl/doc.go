// Package zkctl implements `yrpcc ctl`, the governance client of yrpc
// services registered in ZooKeeper: it lists providers, consumers and
// config (ls) and writes the config that running processes watch (drain,
// undrain, weight, limit, mock, rm). Writes go through zkreg's
// compare-and-set UpdateConfig, so concurrent operators never lose each
// other's changes.
//
//	yrpcc ctl ls
//	yrpcc ctl -zk 10.0.0.5:2181 drain users.Users 10.0.0.1:7001 --group HK
//	yrpcc ctl mock users.Users Create fail Unavailable "maintenance" --always --for 10m
//	yrpcc ctl mock users.Users Get value --json '{"id": 1, "name": "test"}' --schema ./schema
//	yrpcc ctl rm users.Users mock Create --group HK --dry-run
//
// Every write checks what it names against what providers publish: a
// service, group or version without providers or consumers, an address
// that is not a provider of the key, or a method the providers' payloads
// do not list is refused, with the close matches (edit distance) in the
// message, unless --force. Removing what the config holds needs no
// provider. Every write prints what it changed ("instance 10.0.0.1:7001:
// (none) -> draining"); --dry-run prints it and writes nothing.
//
// In a locked-down registry (see package zkreg) writes need an operator's
// identity: a digest credential, --auth digest:USER:PASSWORD or
// $YRPC_ZK_AUTH, or a client certificate to a ZooKeeper that authenticates
// by certificate (x509), --zk-tls-cert FILE --zk-tls-key FILE or
// $YRPC_ZK_TLS_CERT and $YRPC_ZK_TLS_KEY; and, to create the nodes of a
// key that has none, the registry's roles: --acl providers=ID,operators=ID
// or $YRPC_ZK_ACL. Credentials are never printed: not in results, errors
// or --help. Without them, a refused write says which flag or variable to
// set, and a refused identity is named (the user, or the certificate's
// x509:DN).
//
// TLS to ZooKeeper's secureClientPort is on with any of --zk-tls-ca FILE
// (the CAs of ZooKeeper's certificate; $YRPC_ZK_TLS_CA), --zk-tls-cert or
// --zk-tls (the system's CAs; $YRPC_ZK_TLS=1). As rt's clients refuse to
// send secret credentials in plaintext, ctl refuses to send --auth without
// TLS unless --zk-plaintext-auth or $YRPC_ZK_PLAINTEXT_AUTH=1 allows it
// (a trusted network, a ZooKeeper without TLS).
//
// When ZooKeeper cannot be reached, ctl gives up after one round of
// every server and names the address, the connection error and -zk /
// $YRPC_ZK.
package zkctl
