// Command yrpcc is yrpc's code generator and tool: it scaffolds schemas,
// generates codecs, dispatch tables and stubs from them, describes them and
// exports them as .proto files.
//
//	yrpcc init [--dir DIR] [--service NAME]... NAME...
//	yrpcc generate [--target DIR] [--package NAME] ./path/to/schema
//	yrpcc describe ./path/to/schema
//	yrpcc proto [--out FILE] ./path/to/schema
//	yrpcc version
//
// Run `yrpcc COMMAND --help` for a command's flags.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/yrpc/yrpc/yrpcc/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.New(os.Stdout, os.Stderr).Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
