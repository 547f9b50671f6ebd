package cli

import (
	"context"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
	"github.com/yrpc/yrpc/zkreg/zkctl"
)

// ctl runs `yrpcc ctl` (package zkctl), which prints its own results and
// one-line errors, with the schema loader for mock values.
func (e *Env) ctl(ctx context.Context, args []string) int {
	if i := zkctl.CommandAt(args); i >= 0 && args[i] == "health" {
		return e.ctlHealth(ctx, args[i+1:]) // the flags before it are ZooKeeper's: health needs none
	}
	return zkctl.Env{Stdout: e.Stdout, Stderr: e.Stderr, MockValue: e.ctlMockValue}.Run(ctx, args)
}

// ctlMockValue loads the schema package in dir and encodes js as the
// response of method of service (zkctl.Env.MockValue), by the rules and
// with the errors of the schema's own mock values (gen.EncodeMock).
func (e *Env) ctlMockValue(ctx context.Context, dir, service, method, js string) ([]byte, error) {
	spec, err := e.Load(ctx, dir, load.Options{Dir: e.Dir})
	if err != nil {
		return nil, err
	}
	return gen.EncodeMock(spec, service, method, js)
}
