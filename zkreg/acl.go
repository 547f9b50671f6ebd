package zkreg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// NodeKind is what a node the registry creates holds; an ACLPolicy gives
// each kind its ACL.
type NodeKind int

// Node kinds, from the root down (see the package doc for the layout).
const (
	// NodeDir is a structure node: the root (and its parents), a service,
	// a group or a version node.
	NodeDir NodeKind = iota + 1
	// NodeProviders is a key's providers node, parent of provider nodes.
	NodeProviders
	// NodeConsumers is a key's consumers node, parent of consumer nodes.
	NodeConsumers
	// NodeProvider is a provider's ephemeral node (its payload).
	NodeProvider
	// NodeConsumer is a consumer's ephemeral node.
	NodeConsumer
	// NodeConfig is a key's governance config node.
	NodeConfig
)

var kindNames = [...]string{"", "directory", "providers", "consumers", "provider", "consumer", "config"}

// String returns the kind's name ("provider").
func (k NodeKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("NodeKind(%d)", int(k))
}

// ACLPolicy gives the ACL of every node the registry creates, in the
// manner of Apache Curator's ACLProvider. ZooKeeper checks ACLs per node
// and per operation: creating or deleting a child needs CREATE or DELETE
// on the parent, changing data needs WRITE on the node. A nil or empty
// ACL is an error: the registry then refuses to create the node.
//
// Options.ACL nil means every node is created open to everyone
// (world:anyone, all permissions), as before ACLs existed: fit only for
// development. DigestPolicy is the ready locked-down policy.
// Implementations must be safe for concurrent use.
type ACLPolicy interface {
	ACL(kind NodeKind, path string) []zk.ACL
}

// Roles names the identities of a locked-down registry by their ACL ids,
// each of one of ZooKeeper's schemes:
//
//   - digest: "user:base64(sha1(user:password))" (Credential.DigestID
//     computes one; so does ZooKeeper's DigestAuthenticationProvider), for
//     a process that presents the credential (Options.Auth);
//   - x509: "x509:" and a certificate's subject DN as ZooKeeper names it
//     ("x509:CN=web,O=shop"; X509ID computes it from the certificate),
//     for a process that connects over TLS (Options.TLS) with that client
//     certificate to a ZooKeeper that authenticates clients by certificate
//     (ssl.clientAuth=need and authProvider.x509 set to
//     org.apache.zookeeper.server.auth.X509AuthenticationProvider).
//
// Ids are not secrets: every process of a deployment is configured with
// the same Roles, but each holds only its own credential or private key.
//
// The zero value names no identity.
type Roles struct {
	// Providers is the identity of the processes that serve: they
	// register provider nodes and create the structure nodes above them.
	Providers string
	// Operators is the identity of `yrpcc ctl`: it alone writes
	// governance config, and may change or delete any node.
	Operators string
	// Consumers, if set, is the only identity besides providers and
	// operators that may register consumer nodes (informational: `ctl
	// ls` lists them). Empty: any client may.
	Consumers string
}

// ParseRoles parses "providers=ID,operators=ID[,consumers=ID]" (the form of
// `yrpcc ctl --acl` and $YRPC_ZK_ACL), where each ID is a digest id or an
// x509 id (see Roles). The commas of an x509 id's DN stay in it: a new
// role starts only at a comma followed by a lower-case word and "=", which
// no DN as ZooKeeper names it holds:
// "providers=x509:CN=web,O=shop,operators=ops:…" names two roles.
func ParseRoles(s string) (Roles, error) {
	var r Roles
	for _, part := range splitRoles(s) {
		name, id, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Roles{}, fmt.Errorf("zkreg: roles: %q is not ROLE=ID", part)
		}
		var dst *string
		switch name {
		case "providers":
			dst = &r.Providers
		case "operators":
			dst = &r.Operators
		case "consumers":
			dst = &r.Consumers
		default:
			return Roles{}, fmt.Errorf("zkreg: roles: unknown role %q (want providers, operators or consumers)", name)
		}
		if *dst != "" {
			return Roles{}, fmt.Errorf("zkreg: roles: %s given twice", name)
		}
		if err := checkRoleID(id); err != nil {
			return Roles{}, fmt.Errorf("zkreg: roles: %s: %w", name, err)
		}
		*dst = id
	}
	return r, nil
}

// splitRoles splits s at every comma that a lower-case word and "="
// follow.
func splitRoles(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ',' {
			continue
		}
		rest := strings.TrimLeft(s[i+1:], " ")
		word := len(rest) - len(strings.TrimLeft(rest, "abcdefghijklmnopqrstuvwxyz"))
		if word > 0 && word < len(rest) && rest[word] == '=' {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// checkRoleID checks an x509 id ("x509:" and a DN) or the shape of a
// digest id, "user:base64-of-20-bytes".
func checkRoleID(id string) error {
	if dn, ok := strings.CutPrefix(id, x509Prefix); ok {
		if !strings.Contains(dn, "=") {
			return fmt.Errorf("%q is not an x509 id x509:DN, e.g. x509:CN=web,O=shop (see X509ID)", id)
		}
		return nil
	}
	user, hash, ok := strings.Cut(id, ":")
	if !ok || user == "" || len(hash) != 28 || !strings.HasSuffix(hash, "=") {
		return fmt.Errorf("%q is neither a digest id USER:BASE64SHA1 (see Credential.DigestID) nor an x509 id x509:DN (see X509ID)", id)
	}
	return nil
}

// aclID returns the ZooKeeper ACL scheme and id of a Roles id.
func aclID(role string) (scheme, id string) {
	if dn, ok := strings.CutPrefix(role, x509Prefix); ok {
		return "x509", dn
	}
	return "digest", role
}

// DigestPolicy returns the ready policy of a locked-down registry, in
// which everyone may read everything (consumers need no credential), and:
//
//	node                       providers       operators  consumers (world if Roles.Consumers is "")
//	root, service, group,      read, create    all        read
//	  version
//	<key>/providers            read, create,   all        read
//	                           delete
//	a provider node            read, write     all        read
//	<key>/consumers            read, create,   all        read, create, delete
//	                           delete
//	a consumer node            read, write     all        read, write
//	<key>/config               read            all        read
//
// So only the providers' identity (and operators) can create, change or
// delete a provider node, and only operators can write governance config.
// Despite its name, the policy takes x509 ids as well as digest ids, in
// any mix (see Roles). Operators is required. Without Providers (a `yrpcc
// ctl` that knows only its own identity), the policy gives no ACL for the
// nodes that providers must be able to write, so a registry with it
// refuses to create them rather than lock providers out.
func DigestPolicy(r Roles) (ACLPolicy, error) {
	if r.Operators == "" {
		return nil, errors.New("zkreg: digest policy: no operators identity")
	}
	for _, id := range []string{r.Providers, r.Operators, r.Consumers} {
		if id == "" {
			continue
		}
		if err := checkRoleID(id); err != nil {
			return nil, fmt.Errorf("zkreg: digest policy: %w", err)
		}
	}
	return digestPolicy(r), nil
}

type digestPolicy Roles

const (
	permRC   = zk.PermRead | zk.PermCreate
	permRCD  = zk.PermRead | zk.PermCreate | zk.PermDelete
	permRW   = zk.PermRead | zk.PermWrite
	worldID  = "anyone"
	worldSch = "world"
)

func (p digestPolicy) ACL(kind NodeKind, path string) []zk.ACL {
	var providers, consumers int32
	switch kind {
	case NodeDir:
		providers = permRC
	case NodeProviders:
		providers = permRCD
	case NodeProvider:
		providers = permRW
	case NodeConsumers:
		providers, consumers = permRCD, permRCD
	case NodeConsumer:
		providers, consumers = permRW, permRW
	case NodeConfig:
	default:
		return nil
	}
	if providers != 0 && p.Providers == "" {
		return nil
	}
	var acl aclList
	acl.addID(worldSch, worldID, zk.PermRead)
	if consumers != 0 {
		if p.Consumers == "" {
			acl.addID(worldSch, worldID, consumers)
		} else {
			acl.add(p.Consumers, consumers)
		}
	}
	if providers != 0 {
		acl.add(p.Providers, providers)
	}
	acl.add(p.Operators, zk.PermAll)
	return acl
}

// aclList merges the permissions of entries with the same id (ZooKeeper
// keeps one entry per id).
type aclList []zk.ACL

// add adds perms for a Roles id.
func (l *aclList) add(role string, perms int32) {
	scheme, id := aclID(role)
	l.addID(scheme, id, perms)
}

func (l *aclList) addID(scheme, id string, perms int32) {
	for i := range *l {
		if (*l)[i].Scheme == scheme && (*l)[i].ID == id {
			(*l)[i].Perms |= perms
			return
		}
	}
	*l = append(*l, zk.ACL{Perms: perms, Scheme: scheme, ID: id})
}

// ErrNoACL is returned when the ACL policy gives no ACL for a node the
// registry must create (see DigestPolicy without Roles.Providers).
var ErrNoACL = errors.New("zkreg: the ACL policy gives no ACL")

// aclFor returns the ACL of a node of kind at path under the registry's
// policy.
func (r *Registry) aclFor(kind NodeKind, path string) ([]zk.ACL, error) {
	if r.acl == nil {
		return zk.WorldACL(zk.PermAll), nil
	}
	acl := r.acl.ACL(kind, path)
	if len(acl) == 0 {
		return nil, fmt.Errorf("%w for %s node %q (is the providers' identity missing from its Roles?)", ErrNoACL, kind, path)
	}
	return acl, nil
}

// worldWritable reports the permissions beyond read that acl grants to
// everyone (0 if none).
func worldWritable(acl []zk.ACL) int32 {
	var perms int32
	for _, a := range acl {
		if a.Scheme == worldSch && a.ID == worldID {
			perms |= a.Perms &^ zk.PermRead
		}
	}
	return perms
}

// explainNoAuth adds what a refusal by ZooKeeper means to err.
func explainNoAuth(err error) error {
	if errors.Is(err, zk.ErrNoAuth) {
		return fmt.Errorf("%w (ZooKeeper refused it: no identity of this registry, neither a credential nor its TLS client certificate, has that permission; see Options.Auth, Options.TLS and the ACL policy)", err)
	}
	return err
}
