// Package procfs reads what the bench and the soak measure of a process
// from Linux's /proc without its help: CPU time (user + system) and
// resident set, now and at its peak. So processes of other builds are
// measured the same way.
package procfs
