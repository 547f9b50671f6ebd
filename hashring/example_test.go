package hashring_test

import (
	"fmt"

	"github.com/yrpc/yrpc/hashring"
)

func Example() {
	nodes := []hashring.Node{
		{Key: "10.0.0.1:8080", Weight: 1},
		{Key: "10.0.0.2:8080", Weight: 1},
		{Key: "10.0.0.3:8080", Weight: 2}, // twice the share of the ring
	}
	r := hashring.New(nodes, hashring.Options{})

	i := r.GetString("user:42")
	fmt.Println("user:42 ->", nodes[i].Key)

	// The failover order for retries: the owner, then the next distinct
	// nodes clockwise.
	for _, j := range r.GetN([]byte("user:42"), 3, make([]int, 0, 3)) {
		fmt.Println("  try", nodes[j].Key)
	}
	// Output:
	// user:42 -> 10.0.0.1:8080
	//   try 10.0.0.1:8080
	//   try 10.0.0.2:8080
	//   try 10.0.0.3:8080
}

func ExampleRing_GetBounded() {
	nodes := []hashring.Node{{Key: "a"}, {Key: "b"}, {Key: "c"}}
	r := hashring.New(nodes, hashring.Options{LoadFactor: 1.25})

	// One hot key sent 9 times: bounded loads cap each node at
	// ceil(1.25*(total+1)/3) (4 for the 9th key), so the key spills over
	// to the next nodes clockwise instead of piling onto its owner.
	loads := make([]int64, len(nodes))
	var total int64
	for range 9 {
		i := r.GetBounded([]byte("hot"), func(i int) int64 { return loads[i] }, total)
		loads[i]++
		total++
	}
	fmt.Println(loads)
	// Output:
	// [1 4 4]
}
