package hashring

import (
	"strconv"
	"testing"
)

func benchKeys() [][]byte {
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte("user:" + strconv.Itoa(i*7919))
	}
	return keys
}

func BenchmarkGet(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			r := New(testNodes(n), Options{})
			keys := benchKeys()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Get(keys[i&1023])
				i++
			}
		})
	}
}

func BenchmarkGetString(b *testing.B) {
	r := New(testNodes(100), Options{})
	b.ReportAllocs()
	for b.Loop() {
		r.GetString("user:1234567")
	}
}

func BenchmarkGetN(b *testing.B) {
	r := New(testNodes(100), Options{})
	keys := benchKeys()
	dst := make([]int, 0, 3)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = r.GetN(keys[i&1023], 3, dst)
		i++
	}
}

func BenchmarkGetBounded(b *testing.B) {
	r := New(testNodes(100), Options{})
	keys := benchKeys()
	loads := make([]int64, 100)
	load := func(i int) int64 { return loads[i] }
	var total int64
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		n := r.GetBounded(keys[i&1023], load, total)
		loads[n]++
		total++
		i++
	}
}

func BenchmarkHash(b *testing.B) {
	for _, n := range []int{8, 32, 256} {
		key := make([]byte, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Hash(key)
			}
		})
	}
}

func BenchmarkNew(b *testing.B) {
	nodes := testNodes(100)
	b.ReportAllocs()
	for b.Loop() {
		New(nodes, Options{})
	}
}
