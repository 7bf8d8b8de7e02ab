// Package pushload sends signed pushes to a push listener as fast as it
// answers and measures it: the load tool behind the ingest benchmark and cmd/pushload.
package pushload
