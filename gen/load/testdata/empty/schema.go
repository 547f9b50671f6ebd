// Package schema declares no schema types.
package schema

// Plain is an ordinary type.
type Plain struct{}
