// Package burst tells a burst of arrivals from a trickle: the outbox
// worker and the push inbox's applier yield to the pushes while one lasts.
package burst
