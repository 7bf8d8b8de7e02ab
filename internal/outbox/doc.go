// Package outbox delivers the pushes the store recorded for the shop's
// endpoints (store/outbox.go): signed as the gateway signs them, at least
// once, in order per transaction key and endpoint, retried on a growing
// schedule like the gateway family's, every attempt recorded in the store.
// It holds nothing of its own: a restart, even after kill -9, carries on
// from what the store holds.
package outbox
