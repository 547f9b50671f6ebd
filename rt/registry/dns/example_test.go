package dns_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/dns"
)

// A client in a Kubernetes pod finds the providers of shop.Catalog as the
// pods of the headless Service "shop-catalog" in its own namespace, all
// listening on port 7000.
func Example() {
	reg, err := dns.New(dns.Options{Port: 7000})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	cli, err := rt.NewClient(rt.WithRegistry(reg))
	if err != nil {
		panic(err)
	}
	defer cli.Close()
	// catalog := shoprpc.NewCatalogClient(cli) ...
}

// SRV records give each provider's port and weight: here the named port
// "yrpc" of the Service "catalog" in the namespace "shop", looked up as
// _yrpc._tcp.catalog.shop.svc.cluster.local.
func Example_srv() {
	reg, err := dns.New(dns.Options{
		SRV:        true,
		SRVService: "yrpc",
		Name:       func(registry.Key) string { return "catalog.shop.svc.cluster.local" },
		Period:     10 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
}

// fixedResolver answers every host lookup with the same addresses.
type fixedResolver []string

func (f fixedResolver) LookupHost(context.Context, string) ([]string, error) { return f, nil }
func (f fixedResolver) LookupSRV(context.Context, string, string, string) (string, []*net.SRV, error) {
	return "", nil, &net.DNSError{Err: "no such host", IsNotFound: true}
}

func ExampleRegistry_Watch() {
	reg, err := dns.New(dns.Options{Port: 7000, Resolver: fixedResolver{"10.0.0.2", "10.0.0.1", "fd00::1"}})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	got := make(chan registry.Snapshot, 1)
	stop, err := reg.Watch(registry.Key{Service: "shop.Catalog"}, func(s registry.Snapshot) { got <- s })
	if err != nil {
		panic(err)
	}
	defer stop()
	s := <-got
	fmt.Println("name:", dns.DefaultName(s.Key))
	for _, p := range s.Providers {
		fmt.Println(p.Addr)
	}
	// Output:
	// name: shop-catalog
	// 10.0.0.1:7000
	// 10.0.0.2:7000
	// [fd00::1]:7000
}
