// Package codectest checks generated messages and services from tests: it
// fills messages with random values, runs round-trip, truncation and
// malformed-input checks, seeds fuzz targets from the encoder, and provides
// Loopback, an in-process rt.Invoker and rt.Registrar that sends every call
// through the generated encoders, dispatch table and handlers.
//
// It uses reflection to fill and compare messages; generated code itself
// never does. It is meant for tests only.
package codectest
