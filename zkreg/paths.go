package zkreg

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/yrpc/yrpc/rt/registry"
)

// defaultSegment names the empty group or version in a path.
const defaultSegment = "_default"

// Names of the nodes under a key's version node.
const (
	providersNode = "providers"
	consumersNode = "consumers"
	configNode    = "config"
)

// escape makes s one ZooKeeper path segment: URL path escaping (so "/" and
// control characters cannot appear) plus an escaped leading dot (ZooKeeper
// refuses "." and ".." segments).
func escape(s string) string {
	e := url.PathEscape(s)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	return e
}

func unescape(seg string) (string, error) { return url.PathUnescape(seg) }

func groupSegment(s string) string {
	if s == "" {
		return defaultSegment
	}
	return escape(s)
}

func parseGroupSegment(seg string) (string, error) {
	if seg == defaultSegment {
		return "", nil
	}
	return unescape(seg)
}

// paths computes the znode paths of one Registry (one root).
type paths struct{ root string } // "" or "/a/b", never a trailing slash

// CheckRoot reports whether root is fit for Options.Root (New refuses it
// otherwise): "" (the default) or an absolute path without empty, "." or
// ".." segments, outside ZooKeeper's reserved /zookeeper. Tools check a root given by a user before connecting.
func CheckRoot(root string) error {
	_, err := newPaths(root)
	return err
}

func newPaths(root string) (paths, error) {
	if root == "" {
		root = DefaultRoot
	}
	if !strings.HasPrefix(root, "/") {
		return paths{}, fmt.Errorf("zkreg: root %q does not start with /", root)
	}
	root = strings.TrimRight(root, "/")
	for _, seg := range strings.Split(root, "/")[1:] {
		if seg == "" || seg == "." || seg == ".." {
			return paths{}, fmt.Errorf("zkreg: bad root %q", root)
		}
	}
	if root == "/zookeeper" || strings.HasPrefix(root, "/zookeeper/") {
		return paths{}, fmt.Errorf("zkreg: root %q is in ZooKeeper's own tree, /zookeeper", root)
	}
	return paths{root: root}, nil
}

func (p paths) rootPath() string {
	if p.root == "" {
		return "/"
	}
	return p.root
}

// isKey reports whether path is a key's node, /root/service/group/version.
func (p paths) isKey(path string) bool {
	rest, ok := strings.CutPrefix(path, p.root+"/")
	return ok && strings.Count(rest, "/") == 2
}

// maxKeyPath bounds the path of a key's node. ZooKeeper drops the
// connection that sends a request over its jute.maxbuffer (1 MiB by
// default), cutting every watch and registration that shares it, again on
// every retry; a service, group or version this long is a mistake anyway.
const maxKeyPath = 16 << 10

// checkKey refuses a key whose node path would exceed maxKeyPath.
func (p paths) checkKey(k registry.Key) error {
	if n := len(p.key(k)); n > maxKeyPath {
		return fmt.Errorf("key %.64q...: path of %d bytes exceeds %d (service, group or version too long)", k.String(), n, maxKeyPath)
	}
	return nil
}

// key returns /root/service/group/version.
func (p paths) key(k registry.Key) string {
	return p.root + "/" + escape(k.Service) + "/" + groupSegment(k.Group) + "/" + groupSegment(k.Version)
}

func (p paths) providers(k registry.Key) string { return p.key(k) + "/" + providersNode }
func (p paths) consumers(k registry.Key) string { return p.key(k) + "/" + consumersNode }
func (p paths) config(k registry.Key) string    { return p.key(k) + "/" + configNode }

func (p paths) endpoint(e registry.Endpoint) string {
	dir := p.providers(e.Key)
	if e.Role == registry.Consumer {
		dir = p.consumers(e.Key)
	}
	return dir + "/" + escape(e.Addr)
}

// encodeEndpoint returns the JSON payload of e's node, stamped with the
// payload version this package writes. A payload over
// registry.MaxPayloadSize is an error: consumers would skip it.
func encodeEndpoint(e registry.Endpoint) ([]byte, error) {
	e.PayloadVersion = registry.PayloadVersion
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("zkreg: encode endpoint %q: %w", e.Addr, err)
	}
	if len(b) > registry.MaxPayloadSize {
		return nil, fmt.Errorf("zkreg: endpoint %q of %s: payload of %d bytes exceeds %d", e.Addr, e.Key, len(b), registry.MaxPayloadSize)
	}
	return b, nil
}

// decodeEndpoint parses the payload of node name (an escaped addr) under
// key and role, and checks it as consumers must before routing to it: its
// size, its addr (which must match the node name), weight and payload
// version (Endpoint.Validate). Unknown fields are ignored.
func decodeEndpoint(k registry.Key, role registry.Role, name string, data []byte) (registry.Endpoint, error) {
	if len(data) > registry.MaxPayloadSize {
		return registry.Endpoint{}, fmt.Errorf("payload of %d bytes exceeds %d", len(data), registry.MaxPayloadSize)
	}
	addr, err := unescape(name)
	if err != nil {
		return registry.Endpoint{}, fmt.Errorf("bad node name %q: %w", name, err)
	}
	var e registry.Endpoint
	if err := json.Unmarshal(data, &e); err != nil {
		return registry.Endpoint{}, fmt.Errorf("bad JSON payload: %w", err)
	}
	if e.Addr != addr {
		return registry.Endpoint{}, fmt.Errorf("payload addr %q does not match node name %q", e.Addr, addr)
	}
	e.Key, e.Role = k, role
	if err := e.Validate(); err != nil {
		return registry.Endpoint{}, err
	}
	return e, nil
}

// decodeConfig parses a config node; an empty node is the zero Config.
func decodeConfig(data []byte) (registry.Config, error) {
	var c registry.Config
	if len(data) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return registry.Config{}, fmt.Errorf("bad config JSON: %w", err)
	}
	return c, nil
}
