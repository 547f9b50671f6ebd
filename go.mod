module github.com/yrpc/yrpc

go 1.26.8

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
