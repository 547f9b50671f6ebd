package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// TestCtlMockValue: `yrpcc ctl mock ... value --json J --schema DIR`
// stores the typed value, encoded from the schema; a field the schema
// does not have is refused.
func TestCtlMockValue(t *testing.T) {
	zk := zktest.Addr(t)
	root := fmt.Sprintf("/yrpcc-ctl-%08x", rand.Uint32())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := zkreg.New(ctx, zkreg.Options{Servers: []string{zk}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	k := registry.Key{Service: "users.Users", Group: "HK", Version: "1.2.0"}
	if err := reg.Register(ctx, registry.Endpoint{Key: k, Role: registry.Provider, Addr: "10.0.0.1:7001", Methods: []string{"Get"}}); err != nil {
		t.Fatal(err)
	}
	base := []string{"ctl", "-zk", zk, "-root", root, "mock", "users.Users", "Get", "value", "--schema", usersSchema, "--group", "HK", "--version", "1.2.0"}
	code, out, errOut := run(t, nil, append(base, "--json", `{"id": 7, "name": "mock", "role": "admin"}`)...)
	if code != 0 || !strings.Contains(out, "mock Get: (none) -> value") {
		t.Fatalf("yrpcc ctl mock value = %d, %q, %q", code, out, errOut)
	}
	// A fresh deadline: the command built the schema, which can take
	// longer than ctx's on a loaded machine.
	cfgCtx, cfgCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cfgCancel()
	cfg, err := reg.Config(cfgCtx, k)
	if err != nil {
		t.Fatal(err)
	}
	var u userrpc.User
	if err := u.Unmarshal(cfg.Mocks["Get"].Value); err != nil || u.ID != 7 || u.Name != "mock" || u.Role != userrpc.UserRoleAdmin {
		t.Errorf("stored mock decodes to %+v, %v", u, err)
	}
	code, _, errOut = run(t, nil, append(base, `--json={"nmae": "typo"}`)...)
	if code != 1 || !strings.Contains(errOut, `mock: value of users.Users/Get: gen: message User has no field "nmae" (it has "created_at", `) {
		t.Errorf("typo in the value = %d, %q", code, errOut)
	}
}
