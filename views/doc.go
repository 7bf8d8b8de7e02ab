// Package views holds the console's screens: lists, details and the push log.
// They render store read models and emit intents as messages; they never do I/O.
package views
