// Package storetest generates realistic cache contents for tests and
// benchmarks of the store and of the console (e.g. 100,000 reservations).
package storetest
