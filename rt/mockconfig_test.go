package rt_test

import (
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// A governance mock that cannot answer as it says — a value that does not
// decode as the method's response (`yrpcc ctl mock ... value-hex` takes
// any bytes), or a "failure" with code OK — is ignored with a warning, as
// a mock with an unknown code is: calls go to the provider instead of
// getting an empty answer, or an error whose code says OK. A good mock in
// the same config, on another method, shows the config has been applied.
func TestConfigMockThatCannotAnswerIsIgnored(t *testing.T) {
	for _, tc := range []struct {
		name string
		mock registry.MockConfig
	}{
		{"undecodable value", registry.MockConfig{Force: true, Action: "value", Value: []byte("bad value")}},
		{"fail with OK", registry.MockConfig{Force: true, Action: "fail", Code: "OK", Message: "all fine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 1)
			ctx := ctxT(t)
			if err := c.reg.UpdateConfig(ctx, registry.Key{Service: testDesc.Name}, func(cfg *registry.Config) error {
				cfg.Mocks = map[string]registry.MockConfig{
					"Echo":  tc.mock,
					"Retry": {Force: true, Action: "fail", Code: "Unavailable", Message: "applied"},
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			until(t, "the config reaching the client", func() bool {
				_, err := call(ctx, c.cli, &testDesc, 2, "x")
				return err != nil && strings.Contains(err.Error(), "applied")
			})
			var md rt.MD
			var resp ownedMsg
			err := c.cli.Invoke(ctx, &testDesc, 0, &msg{S: "real"}, &resp, rt.ResponseMetadata(&md))
			if err != nil || resp.S != "real" || md.Get(rt.MDMock) != "" {
				t.Fatalf("Echo with a broken forced mock = %q, %v (code %v, md %v), want the provider's answer", resp.S, err, rt.CodeOf(err), md)
			}
		})
	}
}

// A mock's failure names the method it answered for, as the runtime's
// other errors do: a client calling many methods can tell which one an
// operator's "maintenance" mock is on.
func TestMockFailureNamesTheMethod(t *testing.T) {
	c := newCluster(t, 1)
	ctx := ctxT(t)
	if err := c.reg.UpdateConfig(ctx, registry.Key{Service: testDesc.Name}, func(cfg *registry.Config) error {
		cfg.Mocks = map[string]registry.MockConfig{"Retry": {Force: true, Action: "fail", Code: "Unavailable", Message: "maintenance"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var err error
	until(t, "the mock reaching the client", func() bool {
		_, err = call(ctx, c.cli, &testDesc, 2, "x")
		return err != nil
	})
	if want := "test.Echo/Retry: maintenance (mock)"; rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), want) {
		t.Fatalf("mocked failure = %v, want Unavailable with %q", err, want)
	}
}
