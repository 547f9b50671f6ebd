//go:build linux

package hostile

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
	"github.com/yrpc/yrpc/rt/wire"
)

// Wire IDs of the methods whose request decoders are attacked.
var (
	say       = hellorpc.HelloServiceDesc.Methods[0].ID
	echoScal  = methodID(&userrpc.UsersServiceDesc, "Echo")
	echoLists = methodID(&userrpc.UsersServiceDesc, "EchoLists")
)

// usersMD is the metadata of calls to users.Users, which the schema puts
// in a group and a version: the keys rt.Client sends them under.
var usersMD = []string{"yrpc-group", userrpc.UsersServiceDesc.Group, "yrpc-version", userrpc.UsersServiceDesc.Version}

// mdFor returns the metadata a request for method needs.
func mdFor(method uint32) []string {
	if userrpc.UsersServiceDesc.MethodIndex(method) >= 0 {
		return usersMD
	}
	return nil
}

func methodID(sd *rt.ServiceDesc, name string) uint32 {
	for _, m := range sd.Methods {
		if m.Name == name {
			return m.ID
		}
	}
	panic("hostile: no method " + name + " in " + sd.Name)
}

// field appends a length-delimited field: tag, then a length claimed as
// claim, then data (claim need not be len(data): that is the bomb).
func field(b []byte, num int, claim uint64, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, claim)
	return append(b, data...)
}

// groups returns n start-group tags of field 2 and, if closed, the n
// end-group tags that close them.
func groups(n int, closed bool) []byte {
	b := bytes.Repeat([]byte{2<<3 | 3}, n)
	if closed {
		b = append(b, bytes.Repeat([]byte{2<<3 | 4}, n)...)
	}
	return b
}

// bodyCase is a request body for a method and the status it must get.
type bodyCase struct {
	name   string
	method uint32
	body   []byte
	want   rt.Code
}

// attackBodies sends every case, rounds times, from each of conns
// connections at once, and checks every answer's status and that every
// connection still serves a normal call after them.
func attackBodies(t *testing.T, tg *target, conns int, rounds int, cases []bodyCase) {
	var frames []byte
	for r := range rounds {
		for i, c := range cases {
			frames = append(frames, request(uint32(r*len(cases)+i+1), c.method, mdFor(c.method), c.body)...)
		}
	}
	frames = append(frames, hello(0xffff, "after")...)
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		c, err := tg.open(attackerIP(i))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			go func() { _, _ = c.Write(frames) }()
			r := wire.NewReader(c, wire.ReaderOptions{})
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			for n := 0; n <= rounds*len(cases); n++ {
				f, err := r.Next()
				if err != nil {
					errs <- err
					return
				}
				want, name := rt.OK, "the call after them"
				if f.ID != 0xffff {
					c := cases[(f.ID-1)%uint32(len(cases))]
					want, name = c.want, c.name
				}
				if got := rt.Code(f.Status); got != want {
					t.Errorf("%s: status %v (%q), want %v", name, got, f.Body, want)
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("reading answers: %v", err)
	}
	for _, c := range cases {
		t.Logf("%s: %d-byte body, answered %v %d times on each of %d connections", c.name, len(c.body), c.want, rounds, conns)
	}
}

// Nesting bombs: groups nested far past codec.MaxDepth in unknown fields
// of the attacked methods' requests are refused with InvalidArgument, and
// groups nested just under it are skipped; the connections serve on.
func TestNestingBombs(t *testing.T) {
	tg := newTarget(t, heapLimit)
	deep := groups(100_000, false)
	attackBodies(t, tg, 20, 3, []bodyCase{
		{"greeter.HelloRequest: 100,000 nested groups", sayHello, deep, rt.InvalidArgument},
		{"greeter.HelloRequest: MaxDepth+1 nested groups, closed", sayHello, groups(codec.MaxDepth+1, true), rt.InvalidArgument},
		{"greeter.HelloRequest: MaxDepth-1 nested groups, closed", sayHello, groups(codec.MaxDepth-1, true), rt.OK},
		{"bench.BenchmarkMessage: 100,000 nested groups", say, deep, rt.InvalidArgument},
		{"users.Scalars: address holding 100,000 nested groups", echoScal, field(nil, 15999, uint64(len(deep)), deep), rt.InvalidArgument},
		{"users.Lists: 20 addresses, each with MaxDepth+1 nested groups", echoLists,
			bytes.Repeat(field(nil, 19, uint64(codec.MaxDepth+1), groups(codec.MaxDepth+1, false)), 20), rt.InvalidArgument},
	})
	tg.check()
}

// Packed-field length bombs: lengths that claim more than the body holds
// (up to 2^63) or that do not fit the element size are refused with
// InvalidArgument without reserving what they claim.
func TestPackedLengthBombs(t *testing.T) {
	tg := newTarget(t, heapLimit)
	eight := make([]byte, 8)
	attackBodies(t, tg, 20, 10, []bodyCase{
		{"bench.BenchmarkMessage: packed fixed64s claiming 2^63 bytes", say, field(nil, 5, 1<<63, eight), rt.InvalidArgument},
		{"bench.BenchmarkMessage: packed fixed64s claiming 2 GiB", say, field(nil, 5, 2<<30, eight), rt.InvalidArgument},
		{"bench.BenchmarkMessage: packed fixed64s of 7 bytes", say, field(nil, 5, 7, eight[:7]), rt.InvalidArgument},
		{"users.Lists: packed int64s claiming 2^40 bytes", echoLists, field(nil, 3, 1<<40, eight), rt.InvalidArgument},
		{"users.Lists: packed fixed32s of 5 bytes", echoLists, field(nil, 8, 5, eight[:5]), rt.InvalidArgument},
		{"users.Lists: packed doubles claiming 2^62 bytes", echoLists, field(nil, 13, 1<<62, eight), rt.InvalidArgument},
		{"users.Lists: string claiming 2 GiB", echoLists, field(nil, 14, 2<<30, eight), rt.InvalidArgument},
		{"users.Lists: address claiming 4 GiB", echoLists, field(nil, 19, 4<<30, eight), rt.InvalidArgument},
		{"users.Lists: packed varints ending mid-varint", echoLists, field(nil, 2, 3, []byte{0x80, 0x80, 0x80}), rt.InvalidArgument},
	})
	tg.check()
}

// streamRequest writes a request frame for method whose body is prefix
// followed by n bytes made of entry repeated, in chunks, so that the
// attacker holds 64 KiB of it at most.
func streamRequest(c net.Conn, id, method uint32, prefix, entry []byte, n int) error {
	b := wire.AppendHeader(nil, &wire.Header{Type: wire.TypeRequest, ID: id, Method: method}, mdFor(method), len(prefix)+n)
	if _, err := c.Write(append(b, prefix...)); err != nil {
		return err
	}
	chunk := bytes.Repeat(entry, (64<<10)/len(entry))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := c.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Bodies that are valid on the wire but decode to much more memory than
// they take. One request of the largest frame size, held by its handler,
// must not make the server hold more than 64 MiB; the garbage of decoding
// it (slices grown by doubling) may take the heap in use to three times
// that.
func TestDecodeAmplification(t *testing.T) {
	hold := field(nil, 20, uint64(len(nameBlock)), []byte(nameBlock)) // tags: the call is held
	n := (wire.DefaultMaxFrameSize - 1024) / 6 * 6                    // a multiple of every entry's size
	cases := []struct {
		name   string
		prefix []byte // after hold
		entry  []byte
	}{
		{"packed int64s of one byte each", binary.AppendUvarint([]byte{3<<3 | 2}, uint64(n)), []byte{0}},
		{"empty strings", nil, []byte{14<<3 | 2, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, 3*heapLimit)
			before := tg.heap.live()
			c, err := tg.open(attackerIP(0))
			if err != nil {
				t.Fatal(err)
			}
			body := len(hold) + len(tc.prefix) + n
			if err := streamRequest(c, 1, echoLists, append(bytes.Clone(hold), tc.prefix...), tc.entry, n); err != nil {
				t.Fatal(err)
			}
			var f *wire.Frame
			answered := make(chan error, 1)
			go func() {
				r := wire.NewReader(c, wire.ReaderOptions{})
				_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
				var err error
				f, err = r.Next()
				answered <- err
			}()
			if !poll(30*time.Second, func() bool {
				return tg.held.running.Load() == 1 || tg.heap.over() || len(answered) > 0
			}) {
				t.Fatal("the call did not start")
			}
			live := tg.heap.live()
			tg.held.releaseBlocked()
			if err := <-answered; err != nil {
				t.Fatal(err)
			}
			if f.Status != 0 {
				t.Errorf("answered %v (%q), want OK", rt.Code(f.Status), f.Body)
			}
			t.Logf("users.Lists of %.1f MiB (%s), answered %v: heap in use after a GC while its call ran %.1f MiB, %.1fx the body; peak %.1f MiB",
				mibs(uint64(body)), tc.name, rt.Code(f.Status), mibs(live), float64(live-min(before, live))/float64(body), mibs(tg.heap.peak.Load()))
			if live > heapLimit {
				t.Errorf("one %.1f MiB request made the server hold %.1f MiB while its call ran, over %.0f MiB", mibs(uint64(body)), mibs(live), mibs(heapLimit))
			}
			tg.check()
		})
	}
}
