// Package timeline tells where a benchmark's slow calls come from: it
// keeps when each call of a counted phase started and what it took, and
// when each process's garbage collections ended, in one file per process
// ("bench run -timeline DIR"), and compares the slowest calls with all
// of them ("bench tail").
//
// A collection ends with its second stop-the-world pause, whose end time
// runtime.MemStats keeps (PauseEnd, for the last 256 collections); its
// concurrent mark phase comes before that, for a few milliseconds at
// most on the benchmark's small heaps. Analyze counts a call as
// overlapping a collection when the call's span meets the Window before
// a collection's end, and reports what share of all calls and of the
// slowest 1 % do so, for the client's collections, the server's and
// either's; and how bunched the slowest calls are in time (the share of
// them in the busiest tenth of 5 ms windows). A tail made by pauses
// shows as slow calls that overlap collections far more often than calls
// in general, bunched into the windows of the pauses.
package timeline
