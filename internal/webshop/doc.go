// Package webshop plays the shop's side of the gateway: it sends a Reserve to
// the gateway and then posts the same envelope to paydesk's order intake, as
// a shop plugin does. The demo and the end-to-end tests make orders with it.
package webshop
