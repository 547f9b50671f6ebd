package balance

import (
	"strconv"
	"testing"
)

// BenchmarkPick measures one Pick over 10 nodes of mixed weights, without
// and with a tried node, from one goroutine and from all of them.
func BenchmarkPick(b *testing.B) {
	nodes := mkNodes(100, 200, 100, 50, 100, 100, 300, 100, 100, 100)
	for i := range nodes {
		nodes[i].Active.Store(int64(i % 4))
	}
	keys := make([][]byte, 256)
	for i := range keys {
		keys[i] = []byte("user:" + strconv.Itoa(i))
	}
	for _, bl := range allBuilders(Options{Seed: 1}) {
		p := bl.Build(nodes, t0)
		b.Run(bl.Name(), func(b *testing.B) {
			b.ReportAllocs()
			info := &Info{}
			i := 0
			for b.Loop() {
				info.Key = keys[i&255]
				p.Pick(info)
				i++
			}
		})
		b.Run(bl.Name()+"/tried", func(b *testing.B) {
			b.ReportAllocs()
			info := &Info{Tried: []int{6}}
			i := 0
			for b.Loop() {
				info.Key = keys[i&255]
				p.Pick(info)
				i++
			}
		})
		b.Run(bl.Name()+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				info := &Info{}
				i := 0
				for pb.Next() {
					info.Key = keys[i&255]
					p.Pick(info)
					i++
				}
			})
		})
	}
}

func BenchmarkBuild(b *testing.B) {
	nodes := mkNodes(100, 200, 100, 50, 100, 100, 300, 100, 100, 100)
	for _, bl := range allBuilders(Options{Seed: 1}) {
		b.Run(bl.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bl.Build(nodes, t0)
			}
		})
	}
}
