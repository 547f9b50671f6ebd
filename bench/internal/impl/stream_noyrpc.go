//go:build !yrpc

package impl

// groupedYRPC returns yrpc's grouped rows; without the "yrpc" tag there
// are none.
func groupedYRPC() (feed, echo, others []*Impl) { return nil, nil, nil }
