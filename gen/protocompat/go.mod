module github.com/yrpc/yrpc/gen/protocompat

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/planetscale/vtprotobuf v0.6.0
	github.com/yrpc/yrpc v0.1.0
	google.golang.org/protobuf v1.36.12
)

require github.com/pierrec/lz4/v4 v4.1.33 // indirect
