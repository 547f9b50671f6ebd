package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// runTour runs the whole tour on regURL and checks that every section
// passed.
func runTour(t *testing.T, regURL string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	tr, err := newTour(ctx, regURL, slog.New(slog.DiscardHandler), &out)
	if err != nil {
		t.Fatal(err)
	}
	err = tr.run(ctx)
	tr.close()
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "All 7 sections passed.") {
		t.Fatal("the summary does not report seven passed sections")
	}
}

func TestTourInMemory(t *testing.T) { runTour(t, "mem://") }

func TestTourOnZooKeeper(t *testing.T) {
	addr := os.Getenv("YRPC_ZK")
	if addr == "" {
		if os.Getenv("YRPC_ZK_REQUIRED") != "" {
			t.Fatal("YRPC_ZK_REQUIRED is set but YRPC_ZK is empty")
		}
		t.Skip("YRPC_ZK not set: no ZooKeeper to run the tour on (scripts/test.sh starts one)")
	}
	runTour(t, "zk://"+addr)
}
