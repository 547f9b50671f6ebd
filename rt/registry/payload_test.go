package registry_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt/registry"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"10.0.0.1:7001", true},
		{"[::1]:8080", true},
		{"[fe80::1%eth0]:1", true},
		{"users-1.svc.cluster.local:65535", true},
		{"provider_1:9000", true},
		{"grpc://10.0.0.1:50051", true},
		{"grpcs://api.example.com:443", true},
		{"grpc://", false},
		{"grpcs://host", false},       // no port
		{"http://10.0.0.1:80", false}, // another scheme
		{"grpc://grpc://h:1", false},
		{"127.0.0.1", false},       // no port
		{"127.0.0.1:0", false},     // port 0
		{"127.0.0.1:65536", false}, // too big
		{"127.0.0.1:-1", false},    // negative
		{"127.0.0.1:+80", false},   // sign
		{"127.0.0.1:080", false},   // leading zero
		{"127.0.0.1:http", false},  // name
		{":7001", false},           // no host
		{"[:::1]:80", false},       // bad IPv6
		{"a b:80", false},          // space
		{"evil/../x:80", false},    // path
		{"user@host:80", false},    // userinfo
		{"h\x00:80", false},        // control
		{"", false},                // empty
		{strings.Repeat("a", 254) + ":1", false},
	} {
		err := registry.CheckAddr(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
}

func TestEndpointValidate(t *testing.T) {
	k := registry.Key{Service: "a.B"}
	p := func(edit func(*registry.Endpoint)) registry.Endpoint {
		e := registry.Endpoint{Key: k, Role: registry.Provider, Addr: "10.0.0.1:1"}
		edit(&e)
		return e
	}
	for _, tc := range []struct {
		name string
		e    registry.Endpoint
		want string // "" means valid
	}{
		{"plain", p(func(*registry.Endpoint) {}), ""},
		{"every field", p(func(e *registry.Endpoint) {
			e.Weight, e.PayloadVersion, e.TLS, e.Token = registry.MaxWeight, registry.PayloadVersion, true, "t"
			e.Methods, e.Protocols = []string{"Get"}, []string{"yrpc", "grpc"}
		}), ""},
		{"consumer id", registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "host:123:abc"}, ""},
		{"no service", p(func(e *registry.Endpoint) { e.Key = registry.Key{} }), "no service"},
		{"bad role", p(func(e *registry.Endpoint) { e.Role = "boss" }), "bad role"},
		{"no addr", p(func(e *registry.Endpoint) { e.Addr = "" }), "no addr"},
		{"negative weight", p(func(e *registry.Endpoint) { e.Weight = -1 }), "out of range 0..10000"},
		{"heavy", p(func(e *registry.Endpoint) { e.Weight = registry.MaxWeight + 1 }), "weight 10001"},
		{"newer payload", p(func(e *registry.Endpoint) { e.PayloadVersion = registry.PayloadVersion + 1 }), "newer than this yrpc reads"},
		{"negative payload version", p(func(e *registry.Endpoint) { e.PayloadVersion = -1 }), "bad payload version"},
		{"provider addr", p(func(e *registry.Endpoint) { e.Addr = "10.0.0.1" }), "not host:port"},
	} {
		err := tc.e.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestEndpointTokenRedacted(t *testing.T) {
	const secret = "s3cr3t-token"
	e := registry.Endpoint{Key: registry.Key{Service: "a.B"}, Role: registry.Provider, Addr: "10.0.0.1:1", Token: secret, TLS: true}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("registered", "endpoint", e)
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), "token=REDACTED") {
		t.Errorf("log line %q: want the token redacted", buf.String())
	}
	if r := e.Redacted(); r.Token != "REDACTED" || e.Token != secret {
		t.Errorf("Redacted = %q (original %q)", r.Token, e.Token)
	}
	if r := (registry.Endpoint{}).Redacted(); r.Token != "" {
		t.Errorf("Redacted of no token = %q, want empty", r.Token)
	}
}
