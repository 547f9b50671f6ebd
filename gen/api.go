package gen

import "errors"

// File is one generated file: a name relative to the target directory and
// its gofmt-clean content.
type File struct {
	Name    string
	Content []byte
}

// Config says where generated code goes. The zero value is not usable:
// Package is required.
type Config struct {
	// Package is the Go package name of the generated code.
	Package string
}

// Generate renders spec as Go files. It validates spec first and returns
// every problem it finds, each naming the schema position, type and call.
func Generate(spec *Spec, cfg Config) ([]File, error) {
	return nil, errors.New("gen: generator not built yet")
}
