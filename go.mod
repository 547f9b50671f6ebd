module github.com/yrpc/yrpc

go 1.26.8

require (
	github.com/dave/jennifer v1.7.1
	github.com/go-zookeeper/zk v1.0.4
	github.com/google/go-cmp v0.7.0
	github.com/pierrec/lz4/v4 v4.1.33
	go.uber.org/goleak v1.3.0
)

require golang.org/x/net v0.62.0
