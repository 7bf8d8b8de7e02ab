// Package pushload sends signed pushes to a push listener as fast as it
// answers and measures it: the load tool behind the ingest benchmark and
// cmd/pushload. It also plays the clients that never prove themselves
// (Attack: one byte, the start of a TLS record, a trickled body, forged
// megabyte bodies) while a Probe posts signed pushes on new connections,
// for TestListenUnderAttack and cmd/pushload -attack.
package pushload
