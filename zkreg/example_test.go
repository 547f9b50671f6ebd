package zkreg_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// A provider announces itself and a consumer follows the providers and
// config of the same key. (Not run: it needs a ZooKeeper server.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := zkreg.New(ctx, zkreg.Options{
		Servers: []string{"127.0.0.1:2181"},
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close() // also removes the provider node at once

	key := registry.Key{Service: "users.Users", Group: "HK", Version: "1.2.0"}
	err = reg.Register(ctx, registry.Endpoint{
		Key: key, Role: registry.Provider, Addr: "10.0.0.1:7001",
		App: "users", StartTime: time.Now(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stop, err := reg.Watch(key, func(s registry.Snapshot) {
		fmt.Println(len(s.Providers), "providers; draining:", s.Config.Instances["10.0.0.1:7001"].Draining)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	// What `yrpcc ctl drain users.Users 10.0.0.1:7001 --group HK --version 1.2.0` does:
	_ = reg.UpdateConfig(ctx, key, func(c *registry.Config) error {
		if c.Instances == nil {
			c.Instances = map[string]registry.InstanceConfig{}
		}
		c.Instances["10.0.0.1:7001"] = registry.InstanceConfig{Draining: true}
		return nil
	})
}
