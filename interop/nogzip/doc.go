// Package nogzip tests a yrpc client that gzips its requests against a
// grpc-go server that does not take gzip. It is a package of its own
// because grpc-go registers compressors for the whole program: this one's
// test binary links no gzip compressor.
package nogzip
