package schema_test

import (
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/schema"
)

func TestAnnotations(t *testing.T) {
	for _, tc := range []struct {
		a       schema.Annotation
		kind    string
		wantErr string
	}{
		{schema.Group("HK"), "group", ""},
		{schema.Group(""), "group", `schema.Group(""): group must not be empty`},
		{schema.Version("1.2.0"), "version", ""},
		{schema.Version(""), "version", `schema.Version(""): version must not be empty`},
		{schema.RateLimit(300, 500), "rate_limit", ""},
		{schema.RateLimit(-1, 5), "rate_limit", `schema.RateLimit(-1, 5): rate must be in (0, 1e9]`},
		{schema.RateLimit(1, 0), "rate_limit", `schema.RateLimit(1, 0): burst must be >= 1`},
		{schema.Breaker(0.5, 20, 5*time.Second), "breaker", ""},
		{schema.Breaker(0, 20, time.Second), "breaker", `error rate must be in (0, 1]`},
		{schema.Breaker(0.5, 0, time.Second), "breaker", `schema.Breaker(0.5, 0, 1s): min requests must be >= 1`},
		{schema.Breaker(0.5, 1, 0), "breaker", `open duration must be > 0`},
		{schema.Balance(schema.P2C), "balance", ""},
		{schema.Balance("best"), "balance", `schema.Balance("best"): unknown balancer`},
		{schema.Package("acme.users.v1"), "package", ""},
		{schema.Package("1acme"), "package", `package must be dot-separated identifiers`},
		{schema.Package("acme."), "package", `package must be dot-separated identifiers`},
		{schema.Package("_acme"), "package", `package must be dot-separated identifiers`},
		{schema.ProtoName("Item"), "proto_name", ""},
		{schema.ProtoName("old_item2"), "proto_name", ""},
		{schema.ProtoName(""), "proto_name", `schema.ProtoName(""): name must be an identifier`},
		{schema.ProtoName("2Item"), "proto_name", `name must be an identifier`},
		{schema.ProtoName("_Item"), "proto_name", `name must be an identifier`},
		{schema.ProtoName("catalog.Item"), "proto_name", `name must be an identifier`},
		{schema.ProtoName("Ïtem"), "proto_name", `name must be an identifier`},
	} {
		d := tc.a.Descriptor()
		if d.Kind != tc.kind {
			t.Errorf("%s: kind %q, want %q", d.Call, d.Kind, tc.kind)
		}
		if !strings.Contains(d.Pos, "schema_test.go:") {
			t.Errorf("%s: position %q", d.Call, d.Pos)
		}
		switch {
		case tc.wantErr == "" && len(d.Errors) > 0:
			t.Errorf("%s: errors %v", d.Call, d.Errors)
		case tc.wantErr != "" && (len(d.Errors) == 0 || !strings.Contains(d.Errors[0].Error(), tc.wantErr)):
			t.Errorf("%s: errors %v, want %q", d.Call, d.Errors, tc.wantErr)
		}
	}
	if d := schema.Breaker(0.5, 20, 5*time.Second).Descriptor(); *d.Breaker != (schema.BreakerPolicy{ErrorRate: 0.5, MinRequests: 20, OpenFor: 5 * time.Second}) {
		t.Errorf("breaker %+v", d.Breaker)
	}
	if d := schema.ProtoName("Item").Descriptor(); d.ProtoName != "Item" {
		t.Errorf("ProtoName %q", d.ProtoName)
	}
}

type notMessage struct{}

func (notMessage) Type() {}

func TestRef(t *testing.T) {
	name, pkg, err := schema.Ref(User.Type)
	if err != nil || name != "User" || pkg != "github.com/yrpc/yrpc/schema_test" {
		t.Errorf("Ref(User.Type) = %q, %q, %v", name, pkg, err)
	}
	for _, bad := range []any{nil, 3, User{}.Type, notMessage.Type, func(int, int) {}, func(User) int { return 0 }} {
		if _, _, err := schema.Ref(bad); err == nil {
			t.Errorf("Ref(%T) succeeded", bad)
		}
	}
	if s := schema.RefString(Address.Type); s != "Address.Type" {
		t.Errorf("RefString = %q", s)
	}
}

// TestBaseDefaults checks that the base types declare nothing.
func TestBaseDefaults(t *testing.T) {
	var m schema.MessageSchema = Address{}
	var s schema.ServiceSchema = struct{ schema.Service }{}
	if m.Fields() != nil || m.Mixin() != nil || m.Annotations() != nil || m.Reserved() != nil || s.Methods() != nil || s.Annotations() != nil {
		t.Error("base types declare something")
	}
	m.Type()
}
