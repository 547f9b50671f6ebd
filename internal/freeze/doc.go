// Package freeze measures freezes of the calling process: stretches of
// time in which it ran none of its goroutines, as happens on a loaded
// host. Load tests (rt/fault/suite, the bench module's soak) use it to
// tell a failure of the code under test from a call whose timeout the
// whole process slept through. It is for the repository's tests and
// benchmarks.
package freeze
