package gen_test

import (
	"fmt"

	"github.com/yrpc/yrpc/gen"
)

// Example generates a package from a spec built in memory, as gen/load
// builds it from a schema package.
func Example() {
	spec := &gen.Spec{
		Package: "greet",
		Messages: []*gen.Message{
			{Name: "Hello", Fields: []*gen.Field{{Name: "name", Number: 1, Kind: gen.KindString}}},
		},
		Services: []*gen.Service{{Name: "Greeter", Methods: []*gen.Method{
			{Name: "Say", Request: "Hello", Response: "Hello"},
		}}},
	}
	files, err := gen.Generate(spec, gen.Config{Package: "greetrpc"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Name)
	}
	fmt.Printf("%#x\n", gen.MethodID("greet.Greeter/Say"))
	// Output:
	// greet.proto.yrpc.go
	// greeter_service.yrpc.go
	// hello.yrpc.go
	// 0xc21616
}
