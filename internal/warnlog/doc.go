// Package warnlog is the default logger of yrpc's runtime and registries:
// the warnings and errors, to slog.Default(), so that a failed
// deregistration or a skipped provider payload is never silent while
// Info and Debug records stay out of the program's log unless it gives a
// logger of its own.
package warnlog
