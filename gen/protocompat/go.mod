module github.com/yrpc/yrpc/gen/protocompat

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/planetscale/vtprotobuf v0.6.0
	github.com/yrpc/yrpc v0.0.0-00010101000000-000000000000
	google.golang.org/protobuf v1.36.12
)

require github.com/pierrec/lz4/v4 v4.1.33 // indirect

replace github.com/yrpc/yrpc => ../..
