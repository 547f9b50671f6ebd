package schema

//go:generate go run github.com/yrpc/yrpc/yrpcc generate --target ../feedrpc .
