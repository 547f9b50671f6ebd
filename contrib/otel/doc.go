// Package otel traces yrpc calls and measures their duration with
// OpenTelemetry.
package otel
