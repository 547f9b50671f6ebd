// Package testcerts makes certificate authorities and certificates for
// the repository's tests: a CA per test, server certificates for
// 127.0.0.1 and localhost, client certificates with an optional SPIFFE
// ID, their PEM encodings, and TLS configs that use them. Keys are ECDSA
// P-256. It is for tests only: the keys are made in memory and never
// kept.
package testcerts
