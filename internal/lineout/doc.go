// Package lineout writes a program's output lines through a bounded buffer
// from a goroutine of its own, so that a reader that stalls (a full pipe, a
// FIFO nobody reads, a suspended terminal) costs lines, counted and
// reported, never the progress of the code that prints them: the push
// listener answers the gateway whatever happens to its stdout.
package lineout
