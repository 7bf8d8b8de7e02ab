// Package batch runs a day's shipments from a warehouse manifest: one
// capture per reservation (or one cancel of what was not shipped), checked
// whole before anything is sent (the pre-flight), journaled as one batch so
// that a second run of the same manifest or a resume after a kill never sends
// a reservation's rows twice, with a bounded number of requests in flight.
// Every capture goes through internal/ops, the same journal → send once →
// settle path as a single capture from the console or the command line.
package batch
