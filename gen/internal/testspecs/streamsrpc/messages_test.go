package streamsrpc_test

import (
	"testing"

	"github.com/yrpc/yrpc/gen/internal/testspecs/streamsrpc"
	"github.com/yrpc/yrpc/rt/codec/codectest"
)

func TestMessages(t *testing.T) {
	codectest.Suite[streamsrpc.Topic](t, "Topic", 1, 2000)
	codectest.Suite[streamsrpc.Tick](t, "Tick", 2, 2000)
	codectest.Suite[streamsrpc.Chunk](t, "Chunk", 3, 2000)
	codectest.Suite[streamsrpc.Summary](t, "Summary", 4, 2000)
}

func FuzzTopic(f *testing.F) { codectest.Fuzz[streamsrpc.Topic](f, 1) }
func FuzzTick(f *testing.F)  { codectest.Fuzz[streamsrpc.Tick](f, 2) }
