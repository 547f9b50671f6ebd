package harness_test

import (
	"context"
	"fmt"

	"github.com/yrpc/yrpc/bench/internal/harness"
)

// echo is a Client whose calls always succeed.
type echo struct{}

func (echo) Call(context.Context, int) error { return nil }
func (echo) Close() error                    { return nil }

func ExampleRun() {
	ph := harness.Run(context.Background(), echo{}, 4, 1000)
	fmt.Println(len(ph.Lat), "calls,", ph.Errors, "errors")
	// Output: 1000 calls, 0 errors
}
