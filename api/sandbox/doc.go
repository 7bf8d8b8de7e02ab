// Package sandbox is the offline gateway: the whole deferred-invoice and gift
// card interface as an http.Handler, with a signed push sender and an outbox.
package sandbox
